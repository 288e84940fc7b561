"""People the relation word alone does not place: a lowercase first name the parse takes
for a common noun (first_names.py), kin and housemates beyond the core, a passive
"is called", "a friend of mine, X", "X from legal" when the parse hangs "from" on the
verb. Our own wordings, not the frozen set's."""

from __future__ import annotations

import pytest

from shared.understanding import UnderstandingTier
from shared.understanding.first_names import is_first_name
from shared.understanding.tier import Context


@pytest.mark.parametrize(
    ("text", "people"),
    [
        ("my niece lily started kindergarten", [("Lily", "other")]),
        ("my boyfriend tomas loves hiking", [("Tomas", "partner")]),
        ("my friend hope is visiting next week", [("Hope", "friend")]),
        ("a friend of mine, pablo, just got married", [("Pablo", "friend")]),
        ("our hamster is called nugget", [("Nugget", "pet")]),
        ("my stepdad frank fixed the car", [("Frank", "parent")]),
        ("my granddaughter mia is three", [("Mia", "other")]),
        ("my mother-in-law ursula is visiting", [("Ursula", "other")]),
        ("Jonas, my flatmate, is moving out", [("Jonas", "other")]),
        ("Renate, my physio, says my knee is better", [("Renate", "service_provider")]),
        ("I met Sara from legal for coffee", [("Sara", "colleague")]),
    ],
)
def test_kin_and_lowercase_names(
    tier: UnderstandingTier, context: Context, text: str, people: list[tuple[str, str]]
) -> None:
    said = tier.understand(text, context, guess=True).people
    assert said.decided and [(m.name, m.role) for m in said.mentions] == people


@pytest.mark.parametrize(
    "text",
    [
        "my friend will call me tonight",  # a modal, though Will is a name
        "my sister may come by later",
        "Summer is my favourite season",
        "Hope you're doing well",
        "my brother bought a rose for his wife",
    ],
)
def test_a_name_that_is_also_a_word_is_taken_only_where_a_name_stands(
    tier: UnderstandingTier, context: Context, text: str
) -> None:
    said = tier.understand(text, context, guess=True).people
    named = [m.name for m in said.mentions if m.named]
    assert named == []


def test_the_census_lists_are_read() -> None:
    assert is_first_name("Nadia") and is_first_name("ursula")
    assert not is_first_name("kindergarten")
