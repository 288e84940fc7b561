"""The user's people are found however their names are typed (known_names.py), and a plain
question naming one asks memory, not the world."""

from __future__ import annotations

import pytest

from shared.understanding import UnderstandingTier
from shared.understanding.known_names import as_known
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


def test_a_known_name_typed_in_lower_case_settles_the_people(tier: UnderstandingTier) -> None:
    """Without a guess too: "maria" left as a name no rule placed made a production turn
    ask the model who was meant."""
    context = Context(now=NOW, timezone=ZONE, known_names=("Maria",))
    people = tier.understand("what does maria do?", context, guess=False).people
    assert people.decided and [m.name for m in people.mentions] == ["Maria"]


def test_she_is_the_known_person_of_the_question_before(tier: UnderstandingTier) -> None:
    """make dev: "sorry, she lives in braga now" after "what does maria do?" stored nothing."""
    context = Context(
        now=NOW, timezone=ZONE, known_names=("Maria", "Rex"),
        earlier=("what do you know about me?", "what does maria do?"),
    )  # fmt: skip
    understood = tier.understand("sorry, she lives in braga now", context, guess=True)
    assert [m.name for m in understood.people.mentions] == ["Maria"]
    assert [f.about for f in understood.facts.said] == ["Maria"]


def test_a_known_name_in_lower_case_is_parsed_as_a_name(tier: UnderstandingTier) -> None:
    """make dev: "actually tom works as a doctor now" stored nothing ("tom" parsed as a
    compound), and "what does tom do?" went to research ("tom" tagged a verb)."""
    context = Context(now=NOW, timezone=ZONE, known_names=("Tom", "Will", "Bill"))
    told = tier.understand("actually tom works as a doctor now", context, guess=False)
    assert [f.text for f in told.facts.facts] == ["Tom works as a doctor now"]
    asked = tier.understand("what does tom do?", context, guess=True)
    assert (asked.route.label, [m.name for m in asked.people.mentions]) == (
        "person_question", ["Tom"],
    )  # fmt: skip
    assert as_known("will it rain? pay the bill, tom", ("Will", "Bill", "Tom")) == (
        "will it rain? pay the bill, Tom"
    )


def test_she_is_the_person_not_her_cat(tier: UnderstandingTier) -> None:
    """make dev: "oops, she lives in lund, not malmo" stored nothing after "my neighbour
    ingrid lives in malmo and she has a cat called findus" (Ingrid or Findus?)."""
    context = Context(
        now=NOW, timezone=ZONE,
        earlier=("my neighbour ingrid lives in malmo and she has a cat called findus",),
    )  # fmt: skip
    understood = tier.understand("oops, she lives in lund, not malmo", context, guess=True)
    assert [m.name for m in understood.people.mentions] == ["Ingrid"]
    # read whole: the correction's tail ("not malmo") only says what no longer holds
    assert [(f.about, f.text) for f in understood.facts.facts] == [
        ("Ingrid", "Ingrid lives in Lund")
    ]
