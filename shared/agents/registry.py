"""The domain agents the global planner may name, and how each one runs.

``inline`` agents are short (one model call) and run inside the turn; the others are
published as jobs to Pub/Sub and post their result to the chat later. ``needs_approval``
agents act on the user's behalf, so the turn asks before running them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AgentSpec:
    name: str
    description: str  # what the planner reads
    instructions: str  # the agent's own system prompt
    inline: bool = False
    needs_approval: bool = False


AGENTS: dict[str, AgentSpec] = {
    spec.name: spec
    for spec in (
        AgentSpec(
            "drafting",
            "writes a short text for the user: an email, a message, a note, a toast",
            "You draft short texts for the user. Reply with the draft only.",
            inline=True,
        ),
        AgentSpec(
            "research",
            "finds and compares information and writes a sourced summary (takes minutes)",
            "You research the task and reply with a concise, sourced summary.",
        ),
        AgentSpec(
            "productivity",
            "plans schedules, to-do lists and reminders, and books calendar entries",
            "You plan the user's time. Reply with the plan and what you booked.",
            needs_approval=True,
        ),
        AgentSpec(
            "wealth",
            "budgets, expenses and savings plans from what the user tells",
            "You help with budgets and savings. Reply with figures and the reasoning.",
        ),
    )
}


def agent(name: str) -> AgentSpec | None:
    return AGENTS.get(name)


def catalogue() -> str:
    return "\n".join(f"- {spec.name}: {spec.description}" for spec in AGENTS.values())
