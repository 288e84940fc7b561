""" "Remember that I'm vegetarian", "please note that I'll be abroad in May": the user asks
the assistant to keep something about themselves. That is memory's (a statement to read and
store), not a note to file nor a question for the research agent; the words after "that"
are read as if told. "Note that the wifi password is on the fridge" stays a note, and
"note that I need to buy milk" (a to-do) too; "remember to call mum" is a reminder.
"""

from __future__ import annotations

import re

from spacy.lang.en.stop_words import STOP_WORDS

from shared.understanding.casual_names import common_word
from shared.understanding.first_names import is_first_name

_FIRST_PERSON = r"(?:i|i'm|im|i'll|i've|i'd|we|we're|we'll|we've)\b"
_REMEMBER = re.compile(
    r"^(?:please\s+)?(?:(?:can|could|would) you\s+)?(?:please\s+)?"
    r"(?:remember|keep in mind|bear in mind|don'?t forget|do not forget)"
    r"(?:\s+that[:,]?|[:,]|\s+(?=" + _FIRST_PERSON + r"))\s*(?P<what>\S.*)$",
    re.IGNORECASE,
)
_NOTE_ABOUT_ME = re.compile(
    r"^(?:please\s+)?(?:note|take note|make a note|note down)(?:\s+that)?[:,]?\s+"
    r"(?P<what>" + _FIRST_PERSON + r".*)$",
    re.IGNORECASE,
)
# What the user has to do is a note (a to-do), not something about them.
_TO_DO = re.compile(
    r"^(?:i|we)\s+(?:still\s+)?(?:need|have|must|should|ought|got|gotta)\b", re.IGNORECASE
)


_GREETING = re.compile(
    r"^(?:hi|hello|hey|hiya|howdy|yo|hallo|ciao|good (?:morning|afternoon|evening)|morning)"
    r"(?: there| again| you)?(?:\s*[!,.:;]+\s*|\s+(?=(?:\S+\s+){2}\S))(?P<rest>\S.*)$",
    re.IGNORECASE,
)


def after_greeting(text: str) -> str | None:
    """What follows a greeting that opens the message; None when none does."""
    match = _GREETING.match(text)
    if match is None:
        return None
    rest = match["rest"].strip()
    return rest[:1].upper() + rest[1:] if rest else None


def told_to_keep(text: str) -> str | None:
    """What the user asks to be kept about themselves, as they would tell it; None when the
    message is not such a request."""
    match = _REMEMBER.match(text) or _NOTE_ABOUT_ME.match(text)
    if match is None:
        return None
    what = match["what"].strip()
    if _TO_DO.match(what) and match.re is _NOTE_ABOUT_ME:
        return None
    return what[:1].upper() + what[1:] if what else None


# "i'm sam", "my name is Sam Miller", "call me sam": the user says who they are.
_INTRODUCTION = re.compile(
    r"^(?:(?:hi|hello|hey|hiya|good (?:morning|afternoon|evening))(?: there)?[\s,!.:;-]*)?"
    r"(?:(?P<said>i'm|i am|im|call me)|my name is|my name's)\s+"
    r"(?P<name>[^\W\d_][\w'-]*(?:\s+[^\W\d_][\w'-]*){0,2})\s*[.!]*$",
    re.IGNORECASE,
)


def introduced_name(text: str) -> str | None:
    """The name the user gives themselves, as a name is written ("Sam"), after a greeting
    or none; None when the message says more. An everyday word is no name ("i'm tired",
    "my name is not important", "call me later") unless it is a first name typed as one
    ("I'm Will."); after "I'm" or "call me" the word must be a first name or typed as a
    name, while "my name is" takes any ("my name is xochitl")."""
    match = _INTRODUCTION.match(text.strip())
    if match is None:
        return None
    words = match["name"].split()
    first, low = words[0], words[0].casefold()
    as_a_name = first[:1].isupper() and is_first_name(first)
    if (common_word(low) or low in STOP_WORDS) and not as_a_name:
        return None
    if match["said"] and not (is_first_name(first) or first[:1].isupper()):
        return None
    return " ".join(w[:1].upper() + w[1:] for w in words)
