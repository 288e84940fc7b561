"""What a question asks the memory, read before anything is embedded. Rules, no model call.

- **References**: "she", "him", "their" name the person the recent conversation last named;
  "that trip" / "this project" name the recent message that spoke of a trip or a project.
  The question is rewritten with them ("When is her birthday?" after "Anna starts at ACME"
  -> "When is Anna birthday?"), so both the embedding and the keyword channel see the name.
- **Time**: "when", "what date", "how long ago" mark a temporal question; the time words
  ("last week", "in May", "two days ago") give the window the temporal channel reads,
  in the user's time zone.

A name is a capitalised word that is not a sentence-opening function word, a weekday, a
month or a greeting; the most recent one wins. This is deliberately small: a richer
understanding tier (coreference, entity recognition, date parsing) can replace
``understand`` behind the same ``QueryPlan``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from shared.conversation.terms import STOP_WORDS, terms
from shared.services.memory.temporal import MONTHS
from shared.services.memory.windows import past_window

_TEMPORAL = re.compile(
    r"\b(when|what (?:date|day|time|year|month)|which (?:date|day|year|month)|"
    r"how long (?:ago|since|before|after)|since when|how many (?:days|weeks|months|years)|"
    r"wann|seit wann|wie lange)\b",
    re.IGNORECASE,
)
_SUBJECT = {"she", "he", "they", "her", "him", "them"}
_POSSESSIVE = {"his", "their", "hers", "theirs"}
_PRONOUN = re.compile(r"\b(she|he|they|her|him|them|his|their|hers|theirs)\b", re.IGNORECASE)
_DEMONSTRATIVE = re.compile(r"\b(?:that|this|those|these|the same)\s+([a-z]{3,})\b", re.I)
_NAME = re.compile(r"\b[A-ZÀ-ÖØ-Þ][a-zà-öø-ÿ]+(?:[-'][A-Z][a-z]+)?\b")
_WORDS_NOT_NAMES = """
i hi hey hello thanks thank yes no ok okay sure well oh please sorry good great nice
monday tuesday wednesday thursday friday saturday sunday today tomorrow yesterday
assistant user mr mrs ms dr
"""
_NOT_NAMES = frozenset(_WORDS_NOT_NAMES.split()) | frozenset(MONTHS) | STOP_WORDS
RECENT_MESSAGES = 6  # how far back a reference is looked for


@dataclass(frozen=True)
class QueryPlan:
    text: str  # what is embedded and searched for: the question, references resolved
    temporal: bool = False  # asks when, or how long ago
    window: tuple[datetime, datetime] | None = None  # the time the question is about
    referent: str | None = None  # the name or earlier message a reference was read as

    @property
    def terms(self) -> list[str]:
        return terms(self.text)


def literal(question: str) -> QueryPlan:
    """The question as it stands (understanding off)."""
    return QueryPlan(text=question)


def understand(
    question: str, recent: Sequence[str], now: datetime, timezone: str = "UTC"
) -> QueryPlan:
    """``recent``: the conversation's last messages, oldest first (the question excluded)."""
    window = past_window(question, now, timezone)
    temporal = bool(_TEMPORAL.search(question)) or window is not None
    text, referent = _resolve_pronouns(question, recent[-RECENT_MESSAGES:])
    if referent is None:
        text, referent = _resolve_demonstrative(question, recent[-RECENT_MESSAGES:])
    return QueryPlan(text=text, temporal=temporal, window=window, referent=referent)


def names_in(text: str) -> list[str]:
    """Capitalised words that can be names, in order."""
    return [word for word in _NAME.findall(text) if word.casefold() not in _NOT_NAMES]


def _resolve_pronouns(question: str, recent: Sequence[str]) -> tuple[str, str | None]:
    if not _PRONOUN.search(question) or names_in(question):
        return question, None  # no pronoun, or the question names its person itself
    name = next((names[-1] for text in reversed(recent) if (names := names_in(text))), None)
    if name is None:
        return question, None

    def replace(match: re.Match[str]) -> str:
        word = match.group(1).casefold()
        return f"{name}'s" if word in _POSSESSIVE else name if word in _SUBJECT else word

    return _PRONOUN.sub(replace, question), name


def _resolve_demonstrative(question: str, recent: Sequence[str]) -> tuple[str, str | None]:
    match = _DEMONSTRATIVE.search(question)
    if match is None:
        return question, None
    wanted = set(terms(match.group(1)))
    if not wanted:
        return question, None
    earlier = next((text for text in reversed(recent) if wanted & set(terms(text))), None)
    if earlier is None:
        return question, None
    return f"{question} ({earlier[:300]})", earlier[:300]
