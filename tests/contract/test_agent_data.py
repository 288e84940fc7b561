"""AgentDataStore contract: the fake and Firestore (emulator) behave the same."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from shared.models.agent_data import (
    MAX_PAGE,
    Budget,
    CalendarEvent,
    Expense,
    Feedback,
    Note,
)
from shared.ports import AgentDataStore

NOW = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)  # Firestore keeps microseconds
ZURICH = timezone(timedelta(hours=1))


def at(hours: float) -> datetime:
    return NOW + timedelta(hours=hours)


def event(eid: str, start: float, hours: float = 1) -> CalendarEvent:
    return CalendarEvent(
        id=eid, title=f"event {eid}", start=at(start), end=at(start + hours), created_at=NOW
    )


def note(nid: str, title: str, text: str, minutes: int) -> Note:
    return Note(id=nid, title=title, text=text, created_at=NOW + timedelta(minutes=minutes))


def expense(eid: str, cents: int, category: str, hours: float, currency: str = "CHF") -> Expense:
    return Expense(
        id=eid,
        amount_minor=cents,
        currency=currency,
        category=category,
        spent_at=at(hours),
        created_at=NOW,
    )


# -- calendar ---------------------------------------------------------------------------------
def test_events_are_those_starting_in_the_window(agent_data: AgentDataStore, user_id: str) -> None:
    for eid, start in (("e1", 0), ("e2", 2), ("e3", 4), ("e4", -1)):
        agent_data.put_event(user_id, event(eid, start, hours=3))
    found = agent_data.list_events(user_id, at(0), at(4), 10)
    assert [e.id for e in found] == ["e1", "e2"]  # e4 overlaps but started before; e3 at end
    assert [e.id for e in agent_data.list_events(user_id, at(-2), at(10), 2)] == ["e4", "e1"]
    assert found[0] == event("e1", 0, hours=3)


# -- notes ------------------------------------------------------------------------------------
def test_note_search_matches_every_word_newest_first(
    agent_data: AgentDataStore, user_id: str
) -> None:
    agent_data.put_note(user_id, note("n1", "Rome trip", "Hotel near the Pantheon", 1))
    agent_data.put_note(user_id, note("n2", "Packing", "passport, charger, rome guide", 2))
    agent_data.put_note(user_id, note("n3", "Groceries", "milk, bread", 3))
    assert [n.id for n in agent_data.search_notes(user_id, "ROME", 10)] == ["n2", "n1"]
    assert [n.id for n in agent_data.search_notes(user_id, "rome hotel", 10)] == ["n1"]
    assert [n.id for n in agent_data.search_notes(user_id, "rome", 1)] == ["n2"]
    assert agent_data.search_notes(user_id, "paris", 10) == []
    with pytest.raises(ValueError):
        agent_data.search_notes(user_id, "   ", 10)


# -- budgets and expenses ---------------------------------------------------------------------
def test_one_budget_per_category(agent_data: AgentDataStore, user_id: str) -> None:
    food = Budget(category="food", currency="CHF", monthly_limit_minor=50000, updated_at=NOW)
    rent = Budget(category="rent", currency="CHF", monthly_limit_minor=200000, updated_at=NOW)
    agent_data.put_budget(user_id, rent)
    agent_data.put_budget(user_id, food)
    raised = food.model_copy(update={"monthly_limit_minor": 60000, "updated_at": at(1)})
    agent_data.put_budget(user_id, raised)
    assert agent_data.get_budget(user_id, " Food ") == raised
    assert agent_data.get_budget(user_id, "travel") is None
    assert agent_data.list_budgets(user_id, 10) == [raised, rent]
    assert agent_data.list_budgets(user_id, 1) == [raised]


def test_expenses_are_those_spent_in_the_window(agent_data: AgentDataStore, user_id: str) -> None:
    for eid, hours in (("x1", 1), ("x2", 0), ("x3", 5), ("x4", -1)):
        agent_data.put_expense(user_id, expense(eid, 1000, "food", hours))
    assert [e.id for e in agent_data.list_expenses(user_id, at(0), at(5), 10)] == ["x2", "x1"]
    assert [e.id for e in agent_data.list_expenses(user_id, at(-5), at(9), 3)] == [
        "x4",
        "x2",
        "x1",
    ]
    assert agent_data.list_expenses(user_id, at(0), at(5), 10)[0] == expense("x2", 1000, "food", 0)


# -- feedback ---------------------------------------------------------------------------------
def test_feedback_lists_newest_first(agent_data: AgentDataStore, user_id: str) -> None:
    older = Feedback(id="f1", text="too slow", rating=2, chat_id="c1", created_at=NOW)
    newer = Feedback(id="f2", text="much better", created_at=at(1))
    agent_data.put_feedback(user_id, older)
    agent_data.put_feedback(user_id, newer)
    assert agent_data.list_feedback(user_id, 10) == [newer, older]
    assert agent_data.list_feedback(user_id, 1) == [newer]


# -- scope and bounds -------------------------------------------------------------------------
def test_records_are_per_user(agent_data: AgentDataStore, user_id: str) -> None:
    neighbour = f"{user_id}_2"  # shares the uid as a prefix
    agent_data.put_note(user_id, note("n1", "Rome", "trip", 0))
    agent_data.put_expense(user_id, expense("x1", 100, "food", 1))
    assert agent_data.search_notes(neighbour, "rome", 10) == []
    assert agent_data.list_expenses(neighbour, at(-1), at(2), 10) == []
    assert [n.id for n in agent_data.search_notes(user_id, "rome", 10)] == ["n1"]  # untouched


@pytest.mark.parametrize("limit", [0, -1, MAX_PAGE + 1])
def test_limits_outside_the_bounds_are_refused(
    agent_data: AgentDataStore, user_id: str, limit: int
) -> None:
    for call in (
        lambda: agent_data.list_events(user_id, at(0), at(1), limit),
        lambda: agent_data.search_notes(user_id, "x", limit),
        lambda: agent_data.list_budgets(user_id, limit),
        lambda: agent_data.list_expenses(user_id, at(0), at(1), limit),
        lambda: agent_data.list_feedback(user_id, limit),
    ):
        with pytest.raises(ValueError):
            call()


def test_windows_must_be_aware_and_forward(agent_data: AgentDataStore, user_id: str) -> None:
    naive = datetime(2026, 3, 1)
    with pytest.raises(ValueError):
        agent_data.list_events(user_id, naive, naive + timedelta(days=1), 10)
    with pytest.raises(ValueError):
        agent_data.list_expenses(user_id, at(1), at(0), 10)


@pytest.mark.parametrize("bad", ["", "a/b", "..", "__reserved__"])
def test_ids_that_name_another_path_are_refused(agent_data: AgentDataStore, bad: str) -> None:
    with pytest.raises(ValueError):
        agent_data.list_budgets(bad, 10)
    with pytest.raises(ValueError):
        agent_data.put_note(bad, note("n1", "t", "x", 0))
