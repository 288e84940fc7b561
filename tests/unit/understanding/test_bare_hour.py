"""An hour said without am or pm is never guessed: the reminder offers both readings, and
the user's pick is the one stored (shared/understanding/hours.py, shared/graph/choices.py)."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest
from spacy.language import Language

from shared.app.agent_delivery import AgentJobService
from shared.app.turn import TurnService
from shared.deps import Deps
from shared.fakes.clock import FixedClock
from shared.models.agent_data import Reminder
from shared.models.domain import AssistantProfile
from shared.models.jobs import AgentJob
from shared.understanding import UnderstandingTier
from shared.understanding.plans import plan_command
from shared.understanding.times import find_times
from tests.unit.turn_kit import request
from tests.unit.understanding.conftest import NOW, ZONE, with_tier


def _options(nlp: Language, text: str) -> list[str] | None:
    plan = plan_command("schedule", text, find_times(nlp(text), NOW, ZONE), NOW, "CHF", ZONE)
    if not plan.decided:
        return None
    call = plan.steps[0].call
    assert call is not None and call.tool == "reminders_add"
    return call.open.options if call.open else [call.args["due_at"]]


@pytest.mark.parametrize(
    ("text", "options"),
    [
        # NOW is Saturday 21 Nov 2026, 13:00 in Zurich
        (
            "remind me to phone rosa on sunday at 11",
            ["2026-11-22T11:00:00+01:00", "2026-11-22T23:00:00+01:00"],
        ),
        (
            "Remind me at 5 to pick up the kids.",
            ["2026-11-21T17:00:00+01:00", "2026-11-22T05:00:00+01:00"],  # the next of each
        ),
        (
            "remind me to call mum at 3 on friday",
            ["2026-11-27T03:00:00+01:00", "2026-11-27T15:00:00+01:00"],
        ),
        ("remind me today at 9 to take the pills", ["2026-11-21T21:00:00+01:00"]),  # 9:00 passed
    ],
)
def test_both_readings_of_a_bare_hour_are_offered(
    nlp: Language, text: str, options: list[str]
) -> None:
    assert _options(nlp, text) == options


@pytest.mark.parametrize(
    "text",
    [
        "remind me at 12 to eat",  # noon by habit, but not read as a choice either
        "remind me at 5 and at 6 to stretch",  # two hours
        "remind me to call Anna at 10:30",  # no bare hour to read
        "remind me today at 1 to stretch",  # both have passed at 13:00
    ],
)
def test_what_is_not_one_bare_hour_is_not_read_as_one(nlp: Language, text: str) -> None:
    options = _options(nlp, text)
    assert options is None or (len(options) == 1 and "T10:30" in options[0])


@pytest.fixture
def wired(deps: Deps, tier: UnderstandingTier, clock: FixedClock) -> Deps:
    wired = with_tier(deps, tier)
    wired.profiles.put_profile("alice", AssistantProfile(timezone=ZONE), clock.now())
    return wired


def _reminders(deps: Deps) -> list[Reminder]:
    jobs = AgentJobService(deps, sleep=lambda _: None, rand=lambda: 0.5)
    for message in deps.publisher.messages:  # type: ignore[attr-defined]
        jobs.run(AgentJob.model_validate_json(message.data), f"push-{message.data[-8:]!r}")
    return deps.reminders.list_open("alice", 10)


@pytest.mark.parametrize(("answer", "hour"), [("2", 23), ("night", 23), ("morning", 11)])
def test_the_time_picked_is_the_reminders(
    wired: Deps, clock: FixedClock, answer: str, hour: int
) -> None:
    asked = TurnService(wired).run("alice", request("remind me to phone rosa on sunday at 11"))
    assert asked.interrupt is not None and asked.interrupt.kind == "approval"
    assert "At what time?" in asked.interrupt.question
    assert "productivity" not in asked.interrupt.question  # no agent's name on screen
    labels = [o.label for o in asked.interrupt.options[:2]]
    assert labels == ["Sun 22 Nov, 11:00 (morning)", "Sun 22 Nov, 23:00 (night)"]
    TurnService(wired).run("alice", request(answer, cmid="m2", chat_id=asked.chat_id))
    [reminder] = _reminders(wired)
    assert reminder.text == "phone rosa"
    local = reminder.due_at.astimezone(ZoneInfo(ZONE))
    assert (local.day, local.hour) == (22, hour)


@pytest.mark.parametrize("consent", ["yes", "ok", "Yes please!"])
def test_a_yes_to_which_time_asks_again_and_the_next_pick_holds(wired: Deps, consent: str) -> None:
    asked = TurnService(wired).run("alice", request("remind me to phone rosa on sunday at 11"))
    assert asked.interrupt is not None
    again = TurnService(wired).run("alice", request(consent, cmid="m2", chat_id=asked.chat_id))
    assert again.interrupt is not None and again.interrupt.id == asked.interrupt.id
    assert "Sun 22 Nov, 11:00 (morning)" in again.reply.text  # the options, shown again
    assert wired.publisher.messages == []  # type: ignore[attr-defined]  # nothing planned
    TurnService(wired).run("alice", request("night", cmid="m3", chat_id=asked.chat_id))
    [reminder] = _reminders(wired)
    assert reminder.due_at.astimezone(ZoneInfo(ZONE)).hour == 23


def test_a_weekly_reminder_keeps_its_repetition_through_the_pick(wired: Deps) -> None:
    text = "remind me every monday at 8 to put the bins out"
    asked = TurnService(wired).run("alice", request(text))
    assert asked.interrupt is not None and "every Monday" in asked.interrupt.question
    TurnService(wired).run("alice", request("morning", cmid="m2", chat_id=asked.chat_id))
    [reminder] = _reminders(wired)
    assert reminder.text == "put the bins out"
    assert reminder.recurrence == "FREQ=WEEKLY;BYDAY=MO"
    local = reminder.due_at.astimezone(ZoneInfo(ZONE))
    assert (local.weekday(), local.hour) == (0, 8)
