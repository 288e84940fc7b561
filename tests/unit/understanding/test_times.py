"""Time expressions resolved in the user's zone; vague or ambiguous ones left unresolved."""

from __future__ import annotations

import pytest
from spacy.language import Language

from shared.understanding.times import find_times
from tests.unit.understanding.conftest import NOW, ZONE


@pytest.mark.parametrize(
    ("text", "expression", "resolved", "clock"),
    [
        ("Remind me tomorrow at 10am", "tomorrow at 10am", "2026-11-22T10:00:00+01:00", True),
        ("See you next Friday", "next Friday", "2026-11-27T00:00:00+01:00", False),
        ("Call me in two weeks", "in two weeks", "2026-12-05T00:00:00+01:00", False),
        ("Her birthday is on March 3rd", "on March 3rd", "2027-03-03T00:00:00+01:00", False),
        ("Water the plants in 2 hours", "in 2 hours", "2026-11-21T15:00:00+01:00", True),
        ("Meet on Monday at 3pm", "on Monday at 3pm", "2026-11-23T15:00:00+01:00", True),
        (
            "The flight is on May 5 at 7:15 pm",
            "on May 5 at 7:15 pm",
            "2027-05-05T19:15:00+02:00",
            True,
        ),
    ],
)
def test_expressions_resolve_in_the_users_zone(
    nlp: Language, text: str, expression: str, resolved: str, clock: bool
) -> None:
    times = find_times(nlp(text), NOW, ZONE)
    assert [(t.text, t.at.isoformat(), t.clock) for t in times.resolved] == [
        (expression, resolved, clock)
    ]
    ref = times.resolved[0]
    assert text[ref.start : ref.end] == expression


def test_the_same_words_resolve_to_the_zones_own_day(nlp: Language) -> None:
    auckland = find_times(nlp("Remind me tomorrow at 10am"), NOW, "Pacific/Auckland").resolved[0]
    assert auckland.at.isoformat() == "2026-11-23T10:00:00+13:00"  # already the 22nd there


@pytest.mark.parametrize(
    "text", ["I have a meeting next week", "Remind me tonight", "Call him sometime later"]
)
def test_spans_and_vague_times_are_not_resolved(nlp: Language, text: str) -> None:
    assert find_times(nlp(text), NOW, ZONE).resolved == []


@pytest.mark.parametrize("text", ["Remind me at 5 to buy milk", "Put it on 3/4 in my calendar"])
def test_an_hour_without_am_or_pm_and_numeric_dates_are_never_guessed(
    nlp: Language, text: str
) -> None:
    assert find_times(nlp(text), NOW, ZONE).resolved == []
