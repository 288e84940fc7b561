"""People as typed in passing, and capitalised words that are nobody. Wordings of their own,
not those of the frozen set (tests/data/understanding_fresh_frozen.tsv)."""

from __future__ import annotations

import pytest

from shared.understanding import UnderstandingTier
from shared.understanding.tier import Context


@pytest.mark.parametrize(
    ("text", "people"),
    [
        ("my sister paula lives in rome", [("Paula", "sibling")]),
        ("my nephew ben plays football", [("Ben", "niece_nephew")]),
        ("my best friend oskar is vegan", [("Oskar", "friend")]),
        ("we got a cat called whiskers", [("Whiskers", "pet")]),
        ("we adopted a puppy named Lotte", [("Lotte", "pet")]),
        ("Paul from marketing called", [("Paul", "colleague")]),
        ("Tom in finance is leaving", [("Tom", "colleague")]),
        ("Greta, my dentist, moved away", [("Greta", "service_provider")]),
        ("Greta, my yoga teacher, moved away", [("Greta", "service_provider")]),
        ("my sister-in-law Heidi visits on sunday", [("Heidi", "in_law")]),
        ("my grandfather Walter loves chess", [("Walter", "grandparent")]),
        # a known first name in lowercase (first_names.py), kin beyond the core, a passive
        # "is called", "a friend of mine, X", "from" hung on the verb
        ("my niece lily started kindergarten", [("Lily", "niece_nephew")]),
        ("my boyfriend tomas loves hiking", [("Tomas", "partner")]),
        ("my friend hope is visiting next week", [("Hope", "friend")]),
        ("a friend of mine, pablo, just got married", [("Pablo", "friend")]),
        ("our hamster is called nugget", [("Nugget", "pet")]),
        ("my stepdad frank fixed the car", [("Frank", "parent")]),
        ("my granddaughter mia is three", [("Mia", "grandchild")]),
        ("my mother-in-law ursula is visiting", [("Ursula", "in_law")]),
        ("Jonas, my flatmate, is moving out", [("Jonas", "other")]),
        ("Renate, my physio, says my knee is better", [("Renate", "service_provider")]),
        ("I met Sara from legal for coffee", [("Sara", "colleague")]),
    ],
)
def test_people_typed_in_passing(
    tier: UnderstandingTier, context: Context, text: str, people: list[tuple[str, str]]
) -> None:
    said = tier.understand(text, context, guess=True).people
    assert said.decided and [(m.name, m.role) for m in said.mentions] == people


@pytest.mark.parametrize(
    "text",
    [
        "climbing the Eiger was hard",
        "Evening walks help me sleep",
        "Reduce my coffee intake, any tips?",
        "Sunrise over the lake was lovely",
    ],
)
def test_capitalised_common_words_are_nobody(
    tier: UnderstandingTier, context: Context, text: str
) -> None:
    assert tier.understand(text, context, guess=True).people.mentions == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("my friend Hope works at the post office", "Hope"),
        ("my colleague Will is off sick", "Will"),
        ("my daughter Rose loves horses", "Rose"),
    ],
)
def test_names_that_are_common_words_are_people_when_a_relation_says_so(
    tier: UnderstandingTier, context: Context, text: str, name: str
) -> None:
    said = tier.understand(text, context).people
    assert said.decided and [m.name for m in said.mentions] == [name]
