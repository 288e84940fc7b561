"""The user's people are found however their names are typed (known_names.py), and a plain
question naming one asks memory, not the world."""

from __future__ import annotations

import pytest

from shared.understanding import UnderstandingTier
from shared.understanding.tier import Context
from tests.unit.understanding.conftest import NOW, ZONE

KNOWN = ("Luca", "Will", "Rosa", "Bill")


def _read(
    tier: UnderstandingTier, text: str, known: tuple[str, ...] = KNOWN
) -> tuple[str, list[str]]:
    understood = tier.understand(text, Context(now=NOW, timezone=ZONE, known_names=known), True)
    return str(understood.route.label), [m.name for m in understood.people.mentions]


@pytest.mark.parametrize(
    ("text", "label", "people"),
    [
        ("what does luca do?", "person_question", ["Luca"]),
        ("is rosa coming on sunday?", "person_question", ["Rosa"]),
        ("will it rain tomorrow?", "research", []),  # a contact called Will is no verb
        ("what is the capital of italy?", "research", []),
        ("can you split the bill three ways?", "research", []),  # Bill, a contact, is no bill
        ("did bill call?", "person_question", ["Bill"]),
    ],
)
def test_known_names_as_typed(
    tier: UnderstandingTier, text: str, label: str, people: list[str]
) -> None:
    assert _read(tier, text) == (label, people)


def test_a_name_nobody_told_of_is_not_made_a_person(tier: UnderstandingTier) -> None:
    assert _read(tier, "what does luca do?", known=())[1] == []
