"""The domain agents the global planner may name, their tools, and how each one runs.

``inline`` agents are short (one model call) and run inside the turn; the others are
published as jobs to Pub/Sub, where the runner gives them up to ``max_steps`` steps (a tool
call or the answer each) and posts their result to the chat. ``deterministic`` agents
(greeting, feedback) answer by rule, without a model. An agent with a sensitive
tool ``needs_approval``: the turn asks before running it, and the runner asks again before
each sensitive call.

Routing is deterministic (a table, no model): ``resolve`` maps an agent name or an intent
label to its specialist, and anything unknown to ``DEFAULT_AGENT``.
"""

from __future__ import annotations

from dataclasses import replace

from shared.agents.spec import AgentPorts, AgentSpec, Tool
from shared.agents.tools.feedback import RecordFeedback, respond_feedback, respond_greeting
from shared.agents.tools.productivity import (
    AddEvent,
    AddNote,
    AddReminder,
    CompleteReminder,
    DraftEmail,
    ListEvents,
    ListReminders,
    SearchNotes,
    SendEmail,
)
from shared.agents.tools.research import MemorySearch, WebSearchTool
from shared.agents.tools.wealth import (
    GetBudget,
    ListExpenses,
    MonthSummary,
    RecordExpense,
    SetBudget,
    SpendingTotal,
)

_TOOLS: tuple[Tool, ...] = (
    AddReminder(), ListReminders(), CompleteReminder(), AddEvent(), ListEvents(), AddNote(),
    SearchNotes(), DraftEmail(), SendEmail(),
    MemorySearch(), WebSearchTool(),
    SetBudget(), GetBudget(), RecordExpense(), ListExpenses(), MonthSummary(), SpendingTotal(),
    RecordFeedback(),
)  # fmt: skip
TOOLS: dict[str, Tool] = {t.name: t for t in _TOOLS}


def _registered(spec: AgentSpec) -> AgentSpec:
    unknown = [name for name in spec.tools if name not in TOOLS]
    if unknown:
        raise ValueError(f"agent {spec.name} names unknown tools {unknown}")
    return replace(spec, needs_approval=any(TOOLS[name].sensitive for name in spec.tools))


AGENTS: dict[str, AgentSpec] = {
    spec.name: _registered(spec)
    for spec in (
        AgentSpec(
            "drafting",
            "writer",
            "writes a short text for the user: an email, a message, a note, a toast",
            "You draft short texts for the user. Reply with the draft only.",
            inline=True,
        ),
        AgentSpec(
            "research",
            "researcher",
            "finds and compares information and writes a sourced summary (takes minutes)",
            "You research the task in what the assistant knows about the user, in their "
            "notes and documents, and on the web when that tool is offered. Reply with a "
            "concise summary that names where each point comes from.",
            tools=("memory_search", "notes_search", "web_search"),
        ),
        AgentSpec(
            "productivity",
            "executor",
            "plans schedules, to-do lists and reminders, books calendar entries, keeps "
            "notes and writes or sends emails",
            "You plan the user's time and act for them with your tools. Times are ISO 8601 "
            "with the user's offset. Say only what a tool confirmed. Sending an email asks "
            "the user first. Reply with the plan and what you booked or sent.",
            tools=(
                "reminders_add",
                "reminders_list",
                "reminders_complete",
                "calendar_add",
                "calendar_list",
                "notes_add",
                "notes_search",
                "email_draft",
                "email_send",
            ),
        ),
        AgentSpec(
            "wealth",
            "analyst",
            "budgets, expenses and savings plans from what the user tells",
            "You help with budgets and expenses. Amounts are decimal text with an ISO 4217 "
            "currency code. Take every total from month_summary, spending_total or the other "
            "tools; never add figures up yourself. Reply with the figures and the reasoning.",
            tools=(
                "budget_set",
                "budget_get",
                "expense_record",
                "expense_list",
                "month_summary",
                "spending_total",
            ),
        ),
        AgentSpec(
            "feedback",
            "front_desk",
            "records the user's feedback, complaint or suggestion about the assistant",
            "You record the user's feedback as they said it and thank them.",
            tools=("feedback_record",),
            deterministic=True,
            max_steps=0,
            respond=respond_feedback,
        ),
        AgentSpec(
            "greeting",
            "front_desk",
            "answers a greeting or thanks",
            "You answer greetings and thanks briefly, in the user's language.",
            deterministic=True,
            plannable=False,  # the turn's greeting fast path answers these
            max_steps=0,
            respond=respond_greeting,
        ),
    )
}

DEFAULT_AGENT = "research"  # what an unknown intent gets: it only reads, never acts
INTENTS: dict[str, str] = {
    "hello": "greeting", "thanks": "greeting", "small_talk": "greeting",
    "complaint": "feedback", "suggestion": "feedback", "rating": "feedback",
    "draft": "drafting", "writing": "drafting",
    "reminder": "productivity", "calendar": "productivity", "schedule": "productivity",
    "notes": "productivity", "email": "productivity", "todo": "productivity",
    "budget": "wealth", "expense": "wealth", "finance": "wealth", "savings": "wealth",
    "question": "research", "search": "research", "lookup": "research",
}  # fmt: skip


def agent(name: str) -> AgentSpec | None:
    return AGENTS.get(name)


def resolve(name: str) -> AgentSpec:
    """The agent of this name or intent label; ``DEFAULT_AGENT`` for anything unknown."""
    key = name.strip().lower()
    return AGENTS.get(key) or AGENTS.get(INTENTS.get(key, "")) or AGENTS[DEFAULT_AGENT]


def tool(name: str) -> Tool:
    """The tool of this name; ``KeyError`` if there is none."""
    return TOOLS[name]


def offered_tools(spec: AgentSpec, ports: AgentPorts) -> tuple[Tool, ...]:
    """The agent's tools that can run with these ports (no web search without a provider)."""
    return tuple(t for t in (TOOLS[name] for name in spec.tools) if t.available(ports))


def catalogue() -> str:
    """What the global planner reads: the plannable agents, one line each."""
    return "\n".join(
        f"- {spec.name}: {spec.description}" for spec in AGENTS.values() if spec.plannable
    )
