"""A reminder said the way people say it: a part of the day is its clock time, a repetition
is the reminder's RRULE (shared/understanding/spoken_times.py). Now is Saturday 21 Nov 2026,
13:00 in Zurich."""

from __future__ import annotations

import pytest
from spacy.language import Language

from shared.understanding.plans import plan_command
from shared.understanding.times import find_times
from tests.unit.understanding.conftest import NOW, ZONE


def _read(nlp: Language, text: str) -> tuple[list[str], str] | None:
    """The reminder's due time(s) (the options when an hour is open) and its RRULE."""
    plan = plan_command("schedule", text, find_times(nlp(text), NOW, ZONE), NOW, "CHF", ZONE)
    if not plan.decided or not plan.steps or plan.steps[0].call is None:
        return None
    call = plan.steps[0].call
    assert call.tool == "reminders_add"
    due = call.open.options if call.open else [call.args["due_at"]]
    return due, call.args.get("recurrence", "")


@pytest.mark.parametrize(
    ("text", "due", "rule"),
    [
        ("remind me to call the dentist tomorrow morning", ["2026-11-22T08:00"], ""),
        ("remind me tonight to lock the door", ["2026-11-21T20:00"], ""),
        ("Remind me Tuesday morning to bring the forms", ["2026-11-24T08:00"], ""),
        ("set a reminder for tomorrow evening to pack", ["2026-11-22T18:00"], ""),
        ("remind me at 7 in the evening to call mum", ["2026-11-21T19:00"], ""),
        ("remind me tomorrow morning at 7 to run", ["2026-11-22T07:00"], ""),
        ("remind me tonight at 9 to take out the trash", ["2026-11-21T21:00"], ""),
        (
            "remind me every monday at 8 to put the bins out",
            ["2026-11-23T08:00", "2026-11-23T20:00"],  # the hour is still asked
            "FREQ=WEEKLY;BYDAY=MO",
        ),
        (
            "remind me each friday at 5pm to submit my timesheet",
            ["2026-11-27T17:00"],
            "FREQ=WEEKLY;BYDAY=FR",
        ),
        (
            "remind me to take out the recycling every thursday night",
            ["2026-11-26T20:00"],
            "FREQ=WEEKLY;BYDAY=TH",
        ),
        ("remind me every day at 9am to take my pills", ["2026-11-22T09:00"], "FREQ=DAILY"),
        ("remind me daily at 7:30 to stretch", ["2026-11-22T07:30"], "FREQ=DAILY"),
        ("remind me every morning to drink water", ["2026-11-22T08:00"], "FREQ=DAILY"),
        (  # a repetition with no time: the hour is asked, as for a day
            "remind me every sunday to call grandma",
            ["2026-11-22T09:00", "2026-11-22T13:00", "2026-11-22T18:00"],
            "FREQ=WEEKLY;BYDAY=SU",
        ),
    ],
)
def test_said_times_are_read(nlp: Language, text: str, due: list[str], rule: str) -> None:
    read = _read(nlp, text)
    assert read is not None
    assert [d[:16] for d in read[0]] == due and read[1] == rule


@pytest.mark.parametrize(
    "text",
    [
        "remind me every weekday at 7 to stretch",  # not made once, nor guessed
        "remind me every other week to clean the oven",
        "remind me every month on the 1st to pay rent",
        "add yoga to my calendar every tuesday at 6pm",  # a calendar entry repeating
    ],
)
def test_what_is_not_read_goes_to_the_model(nlp: Language, text: str) -> None:
    assert _read(nlp, text) is None
