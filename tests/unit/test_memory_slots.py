"""Single-valued slots: a newer value or an ended one supersedes; correction words are not
stored."""

from __future__ import annotations

import pytest

from shared.conversation.slots import NOT, clashes, plainly, slots_of


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("Actually Luca works at Bosch now.", "Luca works at Bosch."),
        ("actually, luca works at bosch now", "Luca works at bosch"),
        ("No wait, Anna lives in Basel.", "Anna lives in Basel."),
        ("Luca now works at Bosch.", "Luca works at Bosch."),
        ("Correction: Rex belongs to Tom", "Rex belongs to Tom"),
        ("Oops, Ingrid lives in Lund.", "Ingrid lives in Lund."),  # make dev kept the "Oops"
        ("Anna lives in Bern.", "Anna lives in Bern."),
        ("Now TV is Anna's favourite channel", "Now TV is Anna's favourite channel"),
    ],
)
def test_plainly_drops_only_the_words_of_a_correction(said: str, kept: str) -> None:
    assert plainly(said) == kept


@pytest.mark.parametrize(
    ("text", "slots"),
    [
        ("Luca works at Siemens as an engineer", {"employer": "siemens", "job": "engineer"}),
        ("Luca works as a nurse", {"job": "nurse"}),
        ("Anna lives at Seestrasse 4", {"home": "seestrasse 4"}),
        ("Anna is married to Tom", {"partner": "tom"}),
        ("Anna's husband is Tom", {"partner": "tom"}),
        ("Rex belongs to Marc", {"owner": "marc"}),
        ("Luca no longer works at UBS", {"employer": NOT + "ubs"}),
        ("Luca doesn't work at UBS anymore", {"employer": NOT + "ubs"}),
        ("Luca works at Bosch, not UBS", {"employer": "bosch"}),
        ("Luca works at Bosch now", {"employer": "bosch"}),
        ("The user's friend Nadia moved to Toronto last month.", {"home": "toronto"}),
        ("Anna's son lives in Paris", {}),
        ("Bernd is a baker in Hamburg.", {"job": "baker"}),
        ("The user's grandmother Rosa is a retired teacher.", {"job": "teacher"}),
        ("Anna is no longer a nurse", {"job": NOT + "nurse"}),
        ("Bernd is a vegetarian", {}),  # no job: never closed by one
        ("Anna is a great cook", {}),  # a skill
        ("Anna's son is a baker", {}),  # someone else's job
        ("Rosa is 88.", {"age": "88"}),
        ("Max is 5 years old", {"age": "5"}),
        ("Max is 5 feet tall", {}),
        ("Anna's son is 7 years old", {}),  # someone else's age
    ],
)
def test_slots_and_their_values(text: str, slots: dict[str, str]) -> None:
    assert slots_of(text) == slots


@pytest.mark.parametrize(
    ("new", "old", "superseded"),
    [
        ("Luca works at Bosch", "Luca works at Siemens as an engineer", True),
        ("Luca works as a pilot", "Luca works at Siemens as an engineer", True),
        ("Luca works at Siemens", "Luca works at Siemens as an engineer", False),
        ("Luca no longer works at UBS", "Luca works at UBS", True),
        ("Luca no longer works at UBS", "Luca works at Bosch", False),
        ("Anna moved to Basel", "Anna lives in Bern", True),
        ("Anna is married to Tom", "Anna is dating Paul", True),
        ("Rex belongs to Marc", "Rex belongs to Anna", True),
        ("Anna likes jazz", "Anna lives in Bern", False),
        ("Bernd is a butcher.", "Bernd is a baker in Hamburg.", True),
        ("Bernd works as a butcher", "Bernd is a baker", True),
        ("Bernd is a butcher.", "Bernd is a vegetarian.", False),
        ("Rosa lives in Salerno.", "Rosa is 88.", False),
        ("Max is 5 years old", "Max is 4 years old", True),  # "actually max is 5, not 4"
        ("Rosa is 89 years old", "Rosa is 88.", True),
    ],
)
def test_a_newer_value_or_an_ended_one_clashes(new: str, old: str, superseded: bool) -> None:
    assert clashes(slots_of(new), slots_of(old)) is superseded
