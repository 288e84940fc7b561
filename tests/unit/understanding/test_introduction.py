"""The user says who they are: kept as their name, never as a contact of that name."""

from __future__ import annotations

import pytest

from shared.conversation.slots import clashes, slots_of
from shared.understanding import Context, UnderstandingTier
from shared.understanding.answers import KnownFact, answer_from_facts, told_back
from shared.understanding.prefaces import introduced_name


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("hi, i'm sam", "Sam"),  # make dev: "Noted." and "The user is sam." stored
        ("hey im lena", "Lena"),
        ("Hello! My name is Sam Miller.", "Sam Miller"),
        ("call me max", "Max"),
        ("I'm Will.", "Will"),  # a word too, but typed as a name
    ],
)
def test_an_introduction_is_the_users_name(
    tier: UnderstandingTier, context: Context, text: str, name: str
) -> None:
    understood = tier.understand(text, context)
    assert understood.route.label == "statement"
    assert understood.people.decided and understood.people.mentions == []
    assert understood.facts.decided
    assert [(f.about, f.text) for f in understood.facts.facts] == [
        ("user", f"The user's name is {name}")
    ]


@pytest.mark.parametrize(
    "text", ["i'm tired", "i'm young", "i'm will", "i'm sam and i live in bern"]
)
def test_what_only_looks_like_an_introduction_is_read_as_usual(
    tier: UnderstandingTier, context: Context, text: str
) -> None:
    facts = tier.understand(text, context).facts
    assert not any("name is" in f.text for f in [*facts.facts, *facts.said])


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("my name is 42", None),
        ("my name is Anna-Lena", "Anna-Lena"),
        ("my name is xochitl", "Xochitl"),  # no list has it: "my name is" says it is one
        ("call me later", None),  # an everyday word
        ("call me asap", None),  # after "call me", a first name or one typed as a name
        ("I'm Tired.", None),  # capitalised, but no first name
        ("my name is not important", None),
    ],
)
def test_what_a_name_is(text: str, name: str | None) -> None:
    assert introduced_name(text) == name


def test_the_users_name_answers_what_is_my_name() -> None:
    said = KnownFact(id="u1", subject_id=None, subject_name=None, text="The user's name is Sam")
    answer = answer_from_facts("what's my name?", [said])
    assert answer is not None and (answer.text, answer.fact_ids) == ("Your name is Sam.", ["u1"])
    unknown = answer_from_facts("do you know my name?", [])
    assert unknown is not None and unknown.text.startswith("I don't know your name yet")


def test_a_new_name_replaces_the_old_one() -> None:
    assert clashes(slots_of("The user's name is Samuel"), slots_of("The user's name is Sam"))
    assert slots_of("Anna's name is Sam") == {}  # someone else's


def test_an_introduction_is_greeted() -> None:
    assert (
        told_back(["The user's name is Sam"]) == "Nice to meet you, Sam! I'll remember your name."
    )
    assert told_back(["Anna lives in Berlin"]) == "Noted: Anna lives in Berlin."
