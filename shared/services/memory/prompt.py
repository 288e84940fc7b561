"""The requests extraction sends: the one extraction call, and the red-flag check.

The extraction request shows the model the current facts of the user and of the persons the
turn already resolved, each under a short ref (F1..Fn), so it can say which fact a new one
replaces without ever seeing or echoing an id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from shared.models.memory import Fact
from shared.ports import ChatTurn, LLMRequest

MAX_PROMPT_FACTS = 12  # the local model's context is small; the newest facts matter most
MAX_MESSAGE_CHARS = 4000

_EXTRACT = """\
You extract what a personal assistant should remember from the user's message.
Keep only what passes the test: would the user want this remembered next week?
Skip small talk, questions, requests, wishes, hypotheticals and anything not stated as true.

facts: one short sentence each, in the third person, at most 200 characters.
- about: "user" when the fact is about the user; otherwise the person's or pet's name exactly
  as written in the message, or the phrase ("my boss") when no name is given. If the message
  only says "he", "she" or "they", write that pronoun: never guess who it is.
- type: Schedule, Travel, Health, Allergy, Medical, Relationship, Work, Hobby, Preference,
  Contact or Other. confidence: how sure the message makes it, 0 to 1.
- sensitivity: high for health, medical, allergies, money, intimate matters; else medium or low.
- durability: durable (stable), long (months), medium (weeks), short (days).
- temporal_marker: the time words exactly as written ("next Friday"), else null.
  date: YYYY-MM-DD only when the message states the date itself, else null.
- replaces: when the fact changes one of the known facts below (a new address, a new job),
  that fact's ref, e.g. "F2"; else null.
entities: every person or pet mentioned, except the user.
- name as written; role relative to the user: partner, child, parent, sibling,
  grandparent, grandchild, aunt_uncle, cousin, niece_nephew, in_law, friend, colleague, pet,
  service_provider or other (someone else's relative or colleague is other).
- descriptors: age, employer, occupation, city, and relation: the relation word as written
  ("son", "boss", "dog", "wife's colleague").
topics: up to 5 short topic words.
"""
_PREFERENCES_ON = "Also extract the user's stated preferences as facts of type Preference."
_PREFERENCES_OFF = "Do not extract preferences: no facts of type Preference."

_RED_FLAG = """\
Decide whether two descriptions name the same individual. A shared name is weak evidence.
Contradictions usually mean two different individuals: a child's age against a job or an
employer, a son against a colleague, a pet against a person, someone else's relative against
the user's own. Answer same_person, your confidence from 0 to 1, and a short reason.
"""


@dataclass(frozen=True)
class ExtractionPrompt:
    request: LLMRequest
    refs: Mapping[str, Fact]  # "F1" -> the fact shown under that ref


def known_facts(facts: Sequence[Fact], limit: int = MAX_PROMPT_FACTS) -> list[Fact]:
    """The facts worth showing: the most recently seen first, at most ``limit``."""
    return sorted(facts, key=lambda fact: (fact.last_seen_at, fact.id), reverse=True)[:limit]


def extraction_prompt(
    message: str,
    facts: Sequence[Fact],
    names: Mapping[str | None, str],
    has_preferences: bool,
) -> ExtractionPrompt:
    """``facts`` are already chosen (see ``known_facts``); ``names`` maps a subject id to
    how the prompt calls it (None: the user)."""
    refs = {f"F{index}": fact for index, fact in enumerate(facts, start=1)}
    lines = [
        f"{ref} ({names.get(fact.subject_entity_id, 'someone')}): {fact.text}"
        for ref, fact in refs.items()
    ]
    known = "\n".join(lines) if lines else "(none)"
    people = [name for subject, name in names.items() if subject is not None]
    text = (
        f"Known facts:\n{known}\n"
        + (f"People already identified in this message: {', '.join(people)}\n" if people else "")
        + f"Message:\n{message[:MAX_MESSAGE_CHARS]}"
    )
    system = _EXTRACT + (_PREFERENCES_ON if has_preferences else _PREFERENCES_OFF)
    request = LLMRequest(
        kind="extraction",
        system=system,
        messages=[ChatTurn(role="user", text=text)],
        max_output_tokens=1024,
        temperature=0.0,
    )
    return ExtractionPrompt(request=request, refs=refs)


def red_flag_request(
    known: str, known_facts_text: Sequence[str], mentioned: str, message: str
) -> LLMRequest:
    facts = "".join(f"\n- {text}" for text in known_facts_text) or " (none)"
    text = (
        f"Known individual: {known}\nWhat is known about them:{facts}\n\n"
        f"Just mentioned: {mentioned}\nIn the message:\n{message[:MAX_MESSAGE_CHARS]}"
    )
    return LLMRequest(
        kind="extraction",
        system=_RED_FLAG,
        messages=[ChatTurn(role="user", text=text)],
        max_output_tokens=160,
        temperature=0.0,
    )
