"""Does a message answer the pending question, and with which option? Rules first.

Certain answers are read without a model: an option's number or ordinal ("2", "the second
one"), yes/no for an approval, "someone else", or words that name exactly one option
("Müller", "the colleague"). Anything else is left to the model only when it is short and
not itself a question; a longer message or a question is a new request (an escape).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shared.conversation.text import fold
from shared.models.wire import Interrupt, InterruptOption

SOMEONE_ELSE = "someone_else"
APPROVE, REJECT, EDIT = "approve", "reject", "edit"  # edit: the answer's words replace the goal
ANSWER = "answer"  # a clarification: the answer's words are the answer
WORDS = frozenset({EDIT, ANSWER})  # options chosen by free words, never by number or name
SHORT_ANSWER_WORDS = 6

_ORDINALS = {
    "first": 0, "1st": 0, "erste": 0, "ersten": 0, "premier": 0,
    "second": 1, "2nd": 1, "zweite": 1, "zweiten": 1,
    "third": 2, "3rd": 2, "dritte": 2, "dritten": 2,
    "fourth": 3, "4th": 3, "fifth": 4, "5th": 4,
}  # fmt: skip
_NUMBER = re.compile(r"^\s*(?:option\s*|nr\.?\s*|#)?(\d)\s*[.)!]?\s*$", re.IGNORECASE)
_YES = re.compile(
    r"^\s*(yes|yeah|yep|ok|okay|sure|go ahead|do it|approve[d]?|ja|oui|si|sí|confirm(ed)?)\b",
    re.IGNORECASE,
)
_NO = re.compile(r"^\s*(no|nope|don'?t|do not|cancel|stop|reject|nein|non)\b", re.IGNORECASE)
_ELSE = re.compile(
    r"\b(someone else|somebody else|neither|none of them|another one|new (person|one)|"
    r"jemand (anderes|anders)|keine?r? von)\b",
    re.IGNORECASE,
)
_STOP_WORDS = frozenset({"the", "one", "my", "i", "mean", "meant", "der", "die", "das", "von"})


def rule_answer(message: str, options: list[InterruptOption], asked: str = "") -> str | None:
    """The option id the message certainly picks, or None. Never one of ``WORDS``: those
    take what the user writes, not a choice by number or name. Words of the question
    ``asked`` pick nothing: "which Anna ...?" names what every option shares, so "Anna
    bought a new bike." is no answer."""
    options = [option for option in options if option.id not in WORDS]
    ids = [option.id for option in options]
    if APPROVE in ids and REJECT in ids:
        if _YES.match(message):
            return APPROVE
        if _NO.match(message):
            return REJECT
    if SOMEONE_ELSE in ids and _ELSE.search(message):
        return SOMEONE_ELSE
    if len(message.split()) > SHORT_ANSWER_WORDS:  # "the first thing I need..." is no answer
        return None
    picked = _by_position(message, options)
    return picked if picked is not None else _by_words(message, options, _words(asked))


def bare_yes(message: str) -> bool:
    """Only a yes ("yes", "ok", "sure, go ahead!"): consent, but no pick among values."""
    match = _YES.match(message)
    return match is not None and len(message.split()) <= 3 and not message.rstrip().endswith("?")


def may_be_answer(message: str) -> bool:
    """Short and not a question: worth asking the model whether it answers."""
    return len(message.split()) <= SHORT_ANSWER_WORDS and not message.rstrip().endswith("?")


def _by_position(message: str, options: list[InterruptOption]) -> str | None:
    number = _NUMBER.match(message)
    index = int(number.group(1)) - 1 if number else None
    if index is None:
        words = set(fold(message).split())
        found = [position for word, position in _ORDINALS.items() if word in words]
        index = found[0] if len(found) == 1 else None
        if index is None and "last" in words:
            index = len(options) - 1
    return options[index].id if index is not None and 0 <= index < len(options) else None


def _by_words(message: str, options: list[InterruptOption], shared: set[str]) -> str | None:
    words = _words(message)
    if not words:
        return None
    matches = [
        option.id
        for option in options
        if option.id != SOMEONE_ELSE and words & (_words(option.label) - shared)
    ]
    return matches[0] if len(matches) == 1 else None


def _words(text: str) -> set[str]:
    return {w.strip(".,!?:;") for w in fold(text).replace("(", " ").replace(")", " ").split()} - (
        _STOP_WORDS | {""}
    )


@dataclass(frozen=True)
class MessagePicker:
    """Whether a typed message answers a question background work asked (a job's approval
    or clarification, a fact conflict): yes/no, a number, an option's words; for a
    clarification, any short reply that is not itself a question."""

    message: str

    def __call__(self, interrupt: Interrupt) -> str | None:
        ids = {option.id for option in interrupt.options}
        if ANSWER in ids and may_be_answer(self.message):
            return ANSWER
        return rule_answer(self.message, interrupt.options, interrupt.question)
