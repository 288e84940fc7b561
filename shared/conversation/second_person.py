"""Stored facts speak of "the user"; what is said back to the user speaks to them.

"The user is allergic to peanuts." is said as "You are allergic to peanuts.", "the user's
sister" as "your sister", "The user likes jazz." as "You like jazz." Only "the user" as a
subject changes its verb (is/was/has/does and a present-tense -s), so nothing else of the
stored sentence is reworded.
"""

from __future__ import annotations

import re

_IRREGULAR = {"is": "are", "was": "were", "has": "have", "does": "do", "doesn't": "don't",
              "isn't": "aren't", "wasn't": "weren't", "hasn't": "haven't"}  # fmt: skip
_SUBJECT = re.compile(r"\b(the user)( (?:also |still |now |often |usually |never )?)(\w+'?\w*)\b",
                      re.IGNORECASE)  # fmt: skip
_POSSESSIVE = re.compile(r"\bthe user(?:'s|’s)", re.IGNORECASE)
_OBJECT = re.compile(r"\bthe user\b", re.IGNORECASE)
# -s words that are not verbs after a subject ("the user always ..." is handled by the adverbs)
_NOT_VERBS = frozenset({"always", "perhaps", "sometimes"})


def to_you(text: str) -> str:
    """The sentence with "the user" as "you" (and the verb agreeing), "the user's" as
    "your"; a sentence that began with it still begins with a capital."""
    said = _POSSESSIVE.sub("your", text)
    said = _SUBJECT.sub(_agree, said)
    said = _OBJECT.sub("you", said)
    return said[:1].upper() + said[1:] if text[:1].isupper() else said


def _agree(match: re.Match[str]) -> str:
    verb = match[3]
    lower = verb.casefold()
    if lower in _IRREGULAR:
        agreed = _IRREGULAR[lower]
    elif lower in _NOT_VERBS or not lower.endswith("s") or lower.endswith("ss"):
        agreed = verb
    elif lower.endswith(("ches", "shes", "sses", "xes", "zzes", "oes")):
        agreed = verb[:-2]
    elif lower.endswith("ies") and len(lower) > 4:
        agreed = verb[:-3] + "y"
    else:
        agreed = verb[:-1]
    return f"you{match[2]}{agreed}"
