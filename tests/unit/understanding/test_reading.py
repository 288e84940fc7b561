"""Reading is not acting: listing reminders, events, notes or expenses is never asked about,
even for a newcomer whose every action is approved first, and the answer is the reply."""

from __future__ import annotations

from datetime import timedelta

import pytest

from shared.app.turn import TurnService
from shared.deps import Deps
from shared.fakes.clock import FixedClock
from shared.fakes.scripted_llm import ScriptedLLM
from shared.models.agent_data import Expense, Reminder
from shared.models.domain import AssistantProfile
from shared.understanding import UnderstandingTier
from tests.unit.turn_kit import request
from tests.unit.understanding.conftest import with_tier


@pytest.fixture
def wired(deps: Deps, tier: UnderstandingTier, clock: FixedClock) -> Deps:
    wired = with_tier(deps, tier)
    profile = AssistantProfile(timezone="Europe/Zurich", currency="CHF")
    wired.profiles.put_profile("alice", profile, clock.now())
    return wired


def test_a_repeating_reminder_says_how_it_repeats(wired: Deps, clock: FixedClock) -> None:
    due = clock.now() + timedelta(days=1)
    for rid, text, rule in [("r1", "put the bins out", "FREQ=WEEKLY;BYDAY=MO"),
                            ("r2", "take the pills", "FREQ=DAILY"),
                            ("r3", "pay rent", "FREQ=MONTHLY;BYMONTHDAY=1")]:  # fmt: skip
        reminder = Reminder(id=rid, text=text, due_at=due, recurrence=rule, created_at=due)
        wired.reminders.create("alice", reminder)
    lines = TurnService(wired).run("alice", request("what are my reminders")).reply.text
    assert lines.count(", every Monday)") == 1 and lines.count(", every day)") == 1
    assert "pay rent (" in lines and ", repeating)" in lines


def test_the_reminders_are_read_back_without_approval_or_a_model(
    wired: Deps, llm: ScriptedLLM, clock: FixedClock
) -> None:
    due = clock.now() + timedelta(days=1)
    reminder = Reminder(id="r1", text="call the plumber", due_at=due, created_at=clock.now())
    wired.reminders.create("alice", reminder)
    reply = TurnService(wired).run("alice", request("what are my reminders"))
    assert reply.interrupt is None
    assert reply.reply.text.startswith("Your reminders:\n- call the plumber (")
    assert llm.calls == [] and wired.publisher.messages == []  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        ("What's on my calendar this week?", "Nothing is on your calendar then."),
        ("show me my reminders", "You have no open reminders."),
        ("what did i note about the boiler?", "I found no note about that."),
        ("list my expenses", "No expenses are recorded for that month."),
        (
            "how much did I spend this month?",
            "You haven't recorded any expenses this month (1 - 30 Nov).",
        ),
        (
            "how much did i spend this wk",
            "You haven't recorded any expenses this week (Mon 16 - Sun 22 Nov).",
        ),
    ],
)
def test_an_empty_record_is_said_so(wired: Deps, llm: ScriptedLLM, asked: str, said: str) -> None:
    reply = TurnService(wired).run("alice", request(asked))
    assert (reply.interrupt, reply.reply.text, llm.calls) == (None, said, [])


def spent(deps: Deps, minor: int, currency: str, category: str, days_ago: float) -> None:
    at = deps.clock.now() - timedelta(days=days_ago)
    expense = Expense(id=f"e{minor}", amount_minor=minor, currency=currency,
                      category=category, spent_at=at, created_at=at)  # fmt: skip
    deps.agent_data.put_expense("alice", expense)


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        ("how much did i spend this week?",
         "This week (Mon 16 - Sun 22 Nov) you recorded 3 expenses: 42.50 EUR and 9.00 USD."),
        ("How much did I spend on restaurants this week?",
         "This week (Mon 16 - Sun 22 Nov) you recorded 2 expenses on restaurants: 42.50 EUR."),
        ("what did i spend yesterday", "Yesterday (Fri 20 Nov) you recorded 1 expense: 30.00 EUR."),
        ("how much did i spend last week", "Last week (Mon 9 - Sun 15 Nov)"
         " you recorded 1 expense: 99.00 EUR."),
        ("what did i spend in march", "You haven't recorded any expenses in March (1 - 31 Mar)."),
        ("how much did i spend on groceries this week",
         "You haven't recorded any expenses on groceries this week (Mon 16 - Sun 22 Nov)."),
    ],
)  # fmt: skip
def test_spending_is_read_back_as_recorded_without_a_model_or_a_job(
    wired: Deps, llm: ScriptedLLM, asked: str, said: str
) -> None:
    """The user has no currency set: each total is said in the currency it was recorded in."""
    wired.profiles.put_profile(
        "alice", AssistantProfile(timezone="Europe/Zurich"), wired.clock.now()
    )
    spent(wired, 1250, "EUR", "restaurant", 3)  # Wednesday
    spent(wired, 3000, "EUR", "restaurants", 1)
    spent(wired, 900, "USD", "transport", 0)
    spent(wired, 9900, "EUR", "rent", 6)  # last Sunday: last week's
    reply = TurnService(wired).run("alice", request(asked))
    assert (reply.interrupt, reply.reply.text, llm.calls) == (None, said, [])
    assert wired.publisher.messages == []  # type: ignore[attr-defined]


def test_an_action_is_still_asked_about(wired: Deps) -> None:
    asked = TurnService(wired).run("alice", request("Remind me to call Anna tomorrow at 10am"))
    assert asked.interrupt is not None and asked.interrupt.kind == "approval"
