"""The agents' registry and tools against the in-memory fakes: arguments, limits, figures,
the idempotent send and the user-scoped memory search."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared.adapters.chat_notices import ChatNotices
from shared.agents import registry
from shared.agents.spec import AgentInput, ToolContext, ToolRefused, parse_args
from shared.agents.tools.feedback import THANKS
from shared.agents.tools.wealth import month_summary
from shared.config import Settings
from shared.deps import Deps
from shared.errors import WebSearchUnavailable
from shared.fakes.agent_data import FakeAgentDataStore
from shared.fakes.clock import FixedClock
from shared.fakes.conversations import FakeConversationStore
from shared.fakes.facts import FakeContactStore, FakeFactStore
from shared.fakes.outbox import FakeOutbox
from shared.fakes.profiles import FakeProfileStore
from shared.fakes.queues import FakeTaskQueue
from shared.fakes.reminders import FakeReminderStore
from shared.fakes.scripted_llm import HashEmbedder
from shared.models.agent_data import Budget, Expense, WebFindings, WebResult
from shared.models.domain import AssistantProfile
from shared.models.memory import ExtractionChanges, FactDraft, ScoredFact, SemanticQuery
from shared.ports import Usage
from shared.services.reminders.book import ReminderBook

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
ALICE, BOB = "alice", "bob"


class SpyFacts(FakeFactStore):
    """The fake fact store, remembering every search it answered."""

    def __init__(self, clock: FixedClock) -> None:
        super().__init__(FakeContactStore(clock), clock)
        self.searches: list[tuple[str, SemanticQuery]] = []

    def search(self, user_id: str, query: SemanticQuery, now: datetime) -> list[ScoredFact]:
        self.searches.append((user_id, query))
        return super().search(user_id, query, now)


@dataclass
class FakeWeb:
    """A provider of plain hits (another provider than Gemini's grounding)."""

    queries: list[str] = field(default_factory=list)
    unavailable: bool = False

    def search(self, query: str, limit: int) -> WebFindings:
        self.queries.append(query)
        if self.unavailable:
            raise WebSearchUnavailable("the local model service has no web")
        hits = [WebResult(title=f"hit {n}", url=f"https://example.com/{n}") for n in range(20)]
        found = WebFindings.of_results([*hits[:2], WebResult(title="old", url="http://x.org")])
        return found.model_copy(update={"input_tokens": 40, "output_tokens": 10})


@dataclass
class Ports:
    clock: FixedClock = field(default_factory=lambda: FixedClock(NOW))
    embedder: HashEmbedder = field(default_factory=lambda: HashEmbedder(dimension=64))
    profiles: FakeProfileStore = field(default_factory=FakeProfileStore)
    agent_data: FakeAgentDataStore = field(default_factory=FakeAgentDataStore)
    web_search: FakeWeb | None = None
    facts: SpyFacts = field(init=False)
    outbox: FakeOutbox = field(init=False)
    chats: FakeConversationStore = field(default_factory=FakeConversationStore)
    email_notices: ChatNotices = field(init=False)
    tasks: FakeTaskQueue = field(default_factory=FakeTaskQueue)
    reminder_book: ReminderBook = field(init=False)

    def __post_init__(self) -> None:
        self.facts, self.outbox = SpyFacts(self.clock), FakeOutbox(self.clock)
        self.email_notices = ChatNotices(self.chats, self.clock)
        self.reminder_book = ReminderBook(Settings(), self.tasks, FakeReminderStore(), self.clock)


@pytest.fixture
def ports() -> Ports:
    return Ports()


def context(ports: Ports, user: str = ALICE, step: int = 0, key: str | None = None) -> ToolContext:
    return ToolContext(user, "chat-1", "job-1", "s1", ports, idempotency_key=key, step=step)


def call(
    ports: Ports, name: str, user: str = ALICE, step: int = 0, key: str | None = None, **raw: Any
) -> Any:
    tool = registry.tool(name)
    return json.loads(tool.run(context(ports, user, step, key), parse_args(tool, raw)))


def iso(hours: float) -> str:
    return (NOW + timedelta(hours=hours)).isoformat()


# -- registry ---------------------------------------------------------------------------------
def test_every_agent_declares_its_role_tools_and_schemas() -> None:
    for spec in registry.AGENTS.values():
        assert spec.role and spec.input_schema["properties"]["goal"]
        assert "text" in spec.output_schema["properties"]
        assert all(name in registry.TOOLS for name in spec.tools)
    sensitive = {name for name, tool in registry.TOOLS.items() if tool.sensitive}
    assert sensitive == {"email_send"}
    approval = {name for name, spec in registry.AGENTS.items() if spec.needs_approval}
    assert approval == {"productivity"}  # planning asks before running it
    assert registry.AGENTS["drafting"].inline and not registry.AGENTS["drafting"].tools
    deterministic = {name for name, spec in registry.AGENTS.items() if spec.deterministic}
    assert deterministic == {"greeting", "feedback"}


def test_names_and_intents_resolve_and_unknown_ones_get_the_default() -> None:
    assert registry.resolve("wealth").name == "wealth"
    assert registry.resolve(" Budget ").name == "wealth"
    assert registry.resolve("complaint").name == "feedback"
    assert registry.resolve("launch the rockets").name == registry.DEFAULT_AGENT == "research"
    assert registry.agent("launch the rockets") is None


def test_the_planner_reads_the_plannable_agents_only() -> None:
    listed = [line.split(":")[0].removeprefix("- ") for line in registry.catalogue().splitlines()]
    assert listed == ["drafting", "research", "productivity", "wealth", "feedback"]
    with pytest.raises(KeyError):
        registry.tool("rm_rf")


def test_web_search_is_offered_only_with_a_provider(ports: Ports) -> None:
    research = registry.resolve("research")
    names = [t.name for t in registry.offered_tools(research, ports)]
    assert names == ["memory_search", "notes_search"]
    production = Deps(Settings(env="test"))  # builds nothing: no provider is built in
    assert "web_search" not in [t.name for t in registry.offered_tools(research, production)]
    with pytest.raises(ToolRefused, match="no web search provider"):
        call(ports, "web_search", query="rome hotels")
    ports.web_search = FakeWeb()
    assert "web_search" in [t.name for t in registry.offered_tools(research, ports)]
    found = call(ports, "web_search", query="rome hotels", limit=3)
    assert [r["url"] for r in found["results"]] == [
        "https://example.com/0", "https://example.com/1", "http://x.org"
    ]  # fmt: skip
    assert [s["uri"] for s in found["sources"]] == [
        "https://example.com/0",
        "https://example.com/1",
    ]


def test_web_search_charges_the_job_and_keeps_its_sources(ports: Ports) -> None:
    ports.web_search = FakeWeb()
    spent: list[Usage] = []
    cited: list[WebFindings] = []
    tool = registry.tool("web_search")
    budget_left = [True]

    def spend(usage: Usage) -> bool:
        spent.append(usage)
        return budget_left[0]

    ctx = replace(context(ports), spend=spend, cite=cited.append)
    tool.run(ctx, parse_args(tool, {"query": "kunsthaus sunday"}))
    assert spent == [Usage(input_tokens=40, output_tokens=10, search_queries=0)]
    assert [s.uri for s in cited[0].sources] == ["https://example.com/0", "https://example.com/1"]
    budget_left[0] = False
    with pytest.raises(ToolRefused, match="budget"):
        tool.run(ctx, parse_args(tool, {"query": "again"}))


def test_without_the_web_the_agent_is_told_to_say_so(ports: Ports) -> None:
    ports.web_search = FakeWeb(unavailable=True)
    found = call(ports, "web_search", query="Kunsthaus opening hours on Sunday")
    assert found["available"] is False
    assert "could not search the web" in found["note"] and "no web" in found["note"]


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("reminders_add", {"text": "x", "due_at": "2026-11-22T09:00:00"}),  # naive time
        ("reminders_add", {"text": "x" * 201, "due_at": iso(1)}),
        ("reminders_add", {"text": "x", "due_at": iso(1), "priority": "high"}),  # unknown field
        ("reminders_list", {"limit": 51}),
        ("calendar_add", {"title": "gym", "start": iso(2), "end": iso(1)}),
        ("calendar_list", {"start": iso(0), "end": iso(24 * 93)}),
        ("notes_search", {"query": "   "}),
        ("notes_search", {"query": "rome", "limit": 21}),
        ("email_send", {"to": ["not an address"], "subject": "s", "body": "b"}),
        (
            "email_send",
            {"to": [f"p{n}@example.com" for n in range(11)], "subject": "s", "body": "b"},
        ),
        ("memory_search", {"query": "x", "limit": 0}),
        ("budget_set", {"category": "food", "currency": "XYZ", "monthly_limit": "10"}),
        ("budget_set", {"category": "food", "currency": "CHF", "monthly_limit": "12.345"}),
        ("budget_set", {"category": "food", "currency": "CHF", "monthly_limit": "-1"}),
        ("expense_record", {"amount": "100.5", "currency": "JPY", "category": "food"}),
        ("expense_record", {"amount": "0", "currency": "CHF", "category": "food"}),
        ("expense_record", {"amount": "5", "currency": "CHF", "category": "a/b"}),
        ("expense_list", {"month": "2026-13"}),
        ("spending_total", {"first_day": "2026-11-29", "last_day": "2026-11-23"}),
        ("spending_total", {"first_day": "2016-01-01", "last_day": "2026-11-23"}),
        (
            "spending_total",
            {"first_day": "2026-11-23", "last_day": "2026-11-29", "period": "x" * 61},
        ),
        ("feedback_record", {"text": "great", "rating": 6}),
    ],
)
def test_bad_arguments_are_refused(ports: Ports, name: str, raw: dict[str, Any]) -> None:
    with pytest.raises(ToolRefused, match=name):
        parse_args(registry.tool(name), raw)


def test_a_tool_refuses_arguments_of_another_tool(ports: Ports) -> None:
    other = parse_args(registry.tool("reminders_list"), {})
    with pytest.raises(ToolRefused):
        registry.tool("notes_add").run(context(ports), other)


# -- productivity -----------------------------------------------------------------------------
def test_reminders_are_added_listed_and_completed(ports: Ports) -> None:
    later = call(ports, "reminders_add", step=0, text="pay rent", due_at=iso(48))["reminder"]
    sooner = call(ports, "reminders_add", step=1, text="call Bea", due_at=iso(2))["reminder"]
    listed = call(ports, "reminders_list")["reminders"]
    assert [r["text"] for r in listed] == ["call Bea", "pay rent"]
    done = call(ports, "reminders_complete", reminder_id=sooner["id"])["reminder"]
    assert done["state"] == "done" and done["completed_at"] == NOW.isoformat()
    assert [r["id"] for r in call(ports, "reminders_list")["reminders"]] == [later["id"]]
    assert len(call(ports, "reminders_list", include_done=True, limit=1)["reminders"]) == 1
    with pytest.raises(ToolRefused, match="no reminder"):
        call(ports, "reminders_complete", reminder_id="0" * 32)
    with pytest.raises(ToolRefused, match="past"):
        call(ports, "reminders_add", text="too late", due_at=iso(-1))


def test_a_replayed_step_rewrites_its_record_instead_of_adding_one(ports: Ports) -> None:
    first = call(ports, "reminders_add", step=3, text="call Bea", due_at=iso(2))
    replay = call(ports, "reminders_add", step=3, text="call Bea", due_at=iso(2))
    assert first == replay
    assert len(ports.reminder_book.listed(ALICE, 10)) == 1
    assert [task.schedule_time for task in ports.tasks.tasks] == [NOW + timedelta(hours=2)]


def test_calendar_events_are_added_and_listed_in_a_window(ports: Ports) -> None:
    call(ports, "calendar_add", step=0, title="gym", start=iso(24), end=iso(25))
    call(ports, "calendar_add", step=1, title="dentist", start=iso(2), end=iso(3), location="Bern")
    found = call(ports, "calendar_list", start=iso(0), end=iso(24 * 7))["events"]
    assert [(e["title"], e["location"]) for e in found] == [("dentist", "Bern"), ("gym", None)]
    assert call(ports, "calendar_list", start=iso(0), end=iso(24), limit=5)["events"][0][
        "title"
    ] == ("dentist")
    with pytest.raises(ToolRefused, match="over"):
        call(ports, "calendar_add", title="old", start=iso(-5), end=iso(-4))


def test_notes_are_saved_and_searched_with_bounded_excerpts(ports: Ports) -> None:
    call(ports, "notes_add", step=0, title="Rome trip", text="Hotel near the Pantheon. " * 50)
    call(ports, "notes_add", step=1, title="Groceries", text="milk, bread")
    found = call(ports, "notes_search", query="rome pantheon")["notes"]
    assert [n["title"] for n in found] == ["Rome trip"]
    assert len(found[0]["excerpt"]) == 300
    assert call(ports, "notes_search", query="paris")["notes"] == []


def test_a_draft_sends_nothing(ports: Ports) -> None:
    draft = call(ports, "email_draft", to=["bea@example.com"], subject="Dinner", body="At 8?")
    assert draft["sent"] is False and draft["draft"]["to"] == ["bea@example.com"]
    assert ports.outbox.delivered == []


def test_sending_needs_the_approval_key_and_happens_once_per_key(ports: Ports) -> None:
    email: dict[str, Any] = {"to": ["bea@example.com"], "subject": "Dinner", "body": "At 8?"}
    with pytest.raises(ToolRefused, match="approved"):
        call(ports, "email_send", **email)
    assert ports.outbox.delivered == []
    first = call(ports, "email_send", key="job-1:s1:approval-1", **email)
    again = call(ports, "email_send", key="job-1:s1:approval-1", **{**email, "body": "At 9?"})
    assert again == first
    assert [record.message.body for _, record in ports.outbox.delivered] == ["At 8?"]
    call(ports, "email_send", key="job-1:s1:approval-2", **email)  # another approval
    assert len(ports.outbox.delivered) == 2


# -- research ---------------------------------------------------------------------------------
def remember(ports: Ports, user: str, text: str, sensitivity: str = "low") -> None:
    [vector] = ports.embedder.embed([text])
    fact = FactDraft.model_validate(
        {"text": text, "confidence": 0.9, "embedding": vector, "sensitivity": sensitivity,
         "embedding_model": ports.embedder.model_name, "idempotency_key": f"{user}:{text}"}
    )  # fmt: skip
    changes = ExtractionChanges(new_facts=[fact])
    assert ports.facts.apply_extraction(f"task:{user}:{text}", user, changes, NOW)


def test_memory_search_asks_the_fact_store_for_the_users_own_facts(ports: Ports) -> None:
    remember(ports, ALICE, "Alice is allergic to peanuts")
    remember(ports, BOB, "Bob is allergic to peanuts")
    found = call(ports, "memory_search", query="allergic to peanuts", limit=5)["facts"]
    assert [f["text"] for f in found] == ["Alice is allergic to peanuts"]
    [(user, query)] = ports.facts.searches
    assert user == ALICE
    assert (query.embedding_model, query.limit, query.privacy_mode) == ("hash-64", 5, False)
    assert query.embedding == ports.embedder.embed(["allergic to peanuts"])[0]


def test_memory_search_keeps_the_users_privacy_mode(ports: Ports) -> None:
    remember(ports, ALICE, "Alice has a heart condition", sensitivity="high")
    ports.profiles.put_profile(ALICE, AssistantProfile(privacy_mode=True), NOW)
    assert call(ports, "memory_search", query="heart condition")["facts"] == []
    assert ports.facts.searches[-1][1].privacy_mode is True


# -- wealth -----------------------------------------------------------------------------------
def spend(
    ports: Ports, step: int, amount: str, category: str, at: str, currency: str = "CHF"
) -> None:
    call(ports, "expense_record", step=step, amount=amount, currency=currency,
         category=category, spent_at=at)  # fmt: skip


def test_the_month_summary_is_computed_per_category_against_budgets(ports: Ports) -> None:
    ports.profiles.put_profile(ALICE, AssistantProfile(timezone="Europe/Zurich"), NOW)
    ports.clock.set(datetime(2026, 12, 5, tzinfo=UTC))  # November is over
    call(ports, "budget_set", step=0, category="Food", currency="chf", monthly_limit="500")
    call(ports, "budget_set", step=1, category="rent", currency="CHF", monthly_limit="2000.00")
    call(ports, "budget_set", step=2, category="travel", currency="EUR", monthly_limit="300")
    spend(ports, 3, "120.50", "food", "2026-11-02T12:00:00+01:00")
    spend(ports, 4, "79.95", "food", "2026-10-31T23:30:00+00:00")  # 1 Nov 00:30 in Zurich
    spend(ports, 5, "350", "food", "2026-11-20T18:00:00+01:00")
    spend(ports, 6, "2000", "rent", "2026-11-01T09:00:00+01:00")
    spend(ports, 7, "45.10", "fun", "2026-11-15T20:00:00+01:00")
    spend(ports, 8, "89.90", "travel", "2026-11-10T10:00:00+01:00", currency="EUR")
    spend(ports, 9, "999", "food", "2026-11-30T23:30:00+00:00")  # 1 Dec in Zurich
    spend(ports, 10, "999", "food", "2026-10-15T12:00:00+01:00")
    summary = call(ports, "month_summary", month="2026-11", currency="CHF")
    assert summary["categories"] == [
        {"category": "food", "spent": "550.45", "budget": "500.00", "remaining": "-50.45",
         "used_percent": "110.1", "over_budget": True},
        {"category": "fun", "spent": "45.10", "budget": None, "remaining": None,
         "used_percent": None, "over_budget": False},
        {"category": "rent", "spent": "2000.00", "budget": "2000.00", "remaining": "0.00",
         "used_percent": "100.0", "over_budget": False},
    ]  # fmt: skip
    assert (summary["total_spent"], summary["total_budget"]) == ("2595.55", "2500.00")
    assert (summary["unbudgeted_spent"], summary["over_budget"]) == ("45.10", ["food"])
    assert summary["other_currencies"] == {"EUR": "89.90"}
    assert summary["truncated"] is False
    travel = call(ports, "month_summary", month="2026-11", currency="EUR")["categories"]
    assert travel == [
        {"category": "travel", "spent": "89.90", "budget": "300.00", "remaining": "210.10",
         "used_percent": "30.0", "over_budget": False},
    ]  # fmt: skip


def test_the_spending_of_some_days_is_totalled_per_currency_as_recorded(ports: Ports) -> None:
    ports.profiles.put_profile(ALICE, AssistantProfile(timezone="Europe/Zurich"), NOW)
    ports.clock.set(datetime(2026, 11, 28, 12, tzinfo=UTC))
    spend(ports, 0, "12.50", "restaurant", "2026-11-22T23:30:00+00:00")  # Mon 23 in Zurich
    spend(ports, 1, "30", "restaurants", "2026-11-27T19:00:00+01:00")
    spend(ports, 2, "8.20", "groceries", "2026-11-25T10:00:00+01:00", currency="EUR")
    spend(ports, 3, "99", "rent", "2026-11-22T22:30:00+00:00")  # Sun 22 in Zurich: before
    week = {"first_day": "2026-11-23", "last_day": "2026-11-29"}
    found = call(ports, "spending_total", **week, period="this week")
    assert (found["count"], found["totals"]) == (3, {"CHF": "42.50", "EUR": "8.20"})
    assert (found["period"], found["truncated"]) == ("this week", False)
    eating = call(ports, "spending_total", **week, category="Restaurants")
    assert (eating["count"], eating["totals"]) == (2, {"CHF": "42.50"})
    grocery = call(ports, "spending_total", **week, category="grocery")
    assert (grocery["count"], grocery["totals"]) == (1, {"EUR": "8.20"})
    none = call(ports, "spending_total", first_day="2026-11-28", last_day="2026-11-28")
    assert (none["count"], none["totals"]) == (0, {})


def test_month_summary_counts_minor_units_exactly() -> None:
    budget = Budget(category="food", currency="JPY", monthly_limit_minor=3000, updated_at=NOW)
    expenses = [
        Expense(id=f"x{n}", amount_minor=1001, currency="JPY", category="food", spent_at=NOW,
                created_at=NOW)
        for n in range(3)
    ]  # fmt: skip
    summary = month_summary(expenses, [budget], "JPY")
    assert summary["categories"][0]["over_budget"] is True
    assert (summary["total_spent"], summary["categories"][0]["remaining"]) == ("3003", "-3")


def test_budgets_and_expenses_read_back(ports: Ports) -> None:
    call(ports, "budget_set", category="food", currency="CHF", monthly_limit="500")
    assert call(ports, "budget_get", category="FOOD")["budgets"] == [
        {"category": "food", "currency": "CHF", "monthly_limit": "500.00"}
    ]
    assert call(ports, "budget_get", category="travel")["budgets"] == []
    recorded = call(ports, "expense_record", amount="12.3", currency="CHF", category="food")
    assert recorded["expense"]["amount"] == "12.30"
    assert recorded["expense"]["spent_at"] == NOW.isoformat()  # default: now
    spend(ports, 1, "5", "fun", iso(-24))
    listed = call(ports, "expense_list", month="2026-11", category="food")
    assert [e["amount"] for e in listed["expenses"]] == ["12.30"] and listed["more"] is False
    assert call(ports, "expense_list", month="2026-11", limit=1)["more"] is True
    with pytest.raises(ToolRefused, match="future"):
        spend(ports, 2, "5", "fun", iso(48))


# -- deterministic agents ---------------------------------------------------------------------
def test_the_feedback_agent_records_once_per_job_without_a_model(ports: Ports) -> None:
    feedback = registry.resolve("feedback")
    assert feedback.respond is not None
    inputs = AgentInput(goal="The answers are too slow")
    answer = feedback.respond(context(ports), inputs)
    assert answer.text == THANKS
    assert feedback.respond(context(ports), inputs) == answer  # a redelivered job
    [stored] = ports.agent_data.list_feedback(ALICE, 10)
    assert (stored.text, stored.chat_id, stored.id) == (
        "The answers are too slow", "chat-1", answer.data["feedback_id"],
    )  # fmt: skip
    rated = call(ports, "feedback_record", step=1, text="better now", rating=4)
    assert rated["feedback_id"] != stored.id
    assert [f.rating for f in ports.agent_data.list_feedback(ALICE, 10)] == [4, None]


def test_the_greeting_agent_answers_by_rule(ports: Ports) -> None:
    greeting = registry.resolve("hello")
    assert greeting.respond is not None and greeting.name == "greeting"
    assert greeting.respond(context(ports), AgentInput(goal="Grüezi")).text.startswith("Hallo")
    assert "welcome" in greeting.respond(context(ports), AgentInput(goal="thanks!")).text
