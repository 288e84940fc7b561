"""Reading a message as the answer to a pending question, without a model."""

from __future__ import annotations

import pytest

from shared.conversation.answers import may_be_answer, rule_answer
from shared.models.wire import InterruptOption

PEOPLE = [
    InterruptOption(id="p1", label="Thomas Müller (colleague)"),
    InterruptOption(id="p2", label="Thomas Weber (sibling)"),
    InterruptOption(id="someone_else", label="Someone else"),
]
APPROVAL = [InterruptOption(id="approve", label="Yes"), InterruptOption(id="reject", label="No")]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("2", "p2"),
        ("#1", "p1"),
        ("option 3", "someone_else"),
        ("the first one", "p1"),
        ("die zweite", "p2"),
        ("the last one", "someone_else"),
        ("Müller", "p1"),
        ("my sibling", "p2"),
        ("No, someone else entirely", "someone_else"),
        ("Thomas", None),  # names both
        ("7", None),  # no such option
        ("What's the weather like in Bern tomorrow afternoon?", None),
        ("the first thing I need is a hotel in Rome for next week", None),
    ],
)
def test_disambiguation_answers(message: str, expected: str | None) -> None:
    assert rule_answer(message, PEOPLE) == expected


ONE_ANNA = [
    InterruptOption(id="p1", label="Anna (sister)"),
    InterruptOption(id="someone_else", label="Someone else"),
]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("my sister", "p1"),
        ("Anna, my sister.", "p1"),
        ("someone else", "someone_else"),
        ("Anna bought a new bike.", None),  # names only what the question asks about
        ("Anna", None),
    ],
)
def test_the_name_asked_about_picks_no_option(message: str, expected: str | None) -> None:
    assert rule_answer(message, ONE_ANNA, "By the way, which Anna did you mean?") == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("yes", "approve"),
        ("Sure, go ahead", "approve"),
        ("ja", "approve"),
        ("no thanks", "reject"),
        ("Don't", "reject"),
        ("maybe later", None),
    ],
)
def test_approval_answers(message: str, expected: str | None) -> None:
    assert rule_answer(message, APPROVAL) == expected


def test_only_short_non_questions_go_to_the_model() -> None:
    assert may_be_answer("the one from work")
    assert not may_be_answer("which one is from work?")
    assert not may_be_answer("tell me about the weather in Bern and Zurich please")
