"""A new fact against the current facts of its subject: new, a repeat, or a change.

Checked in this order, because a change often looks like a repeat to an embedding ("lives in
Bern" / "lives in Basel" are close vectors):
1. a contradiction: the fact the model said it ``replaces``, or the same single-valued slot
   (email, phone, employer, job, home, partner, a pet's owner: ``slots.py``) with another
   value, or ended ("no longer works at ..."), whatever type each fact was given. Clear
   evidence supersedes the old fact; a sensitive type or confidence below 0.8 is held as a
   ``fact_conflict`` for the user instead;
2. a near-duplicate: cosine similarity at or above the embedding model's calibrated threshold
   and no distinguishing word (a number, a name, a relation, a negation) on one side only;
   it reinforces the current fact instead of adding a row;
3. otherwise a new fact.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from shared.conversation.relations import RELATIONS
from shared.conversation.slots import clashes, slots_of
from shared.conversation.text import fold
from shared.models.memory import (
    SENSITIVE_TYPES,
    Fact,
    FactDraft,
    PendingItem,
    Reinforcement,
    ScoredFact,
    Supersession,
)

CLEAR_CONFIDENCE = 0.8
MAX_REINFORCED = 0.99
# Cosine at or above which two facts of one subject say the same thing, per embedding model.
# Calibrated with the word guard on labelled pairs (tests/unit/test_memory_conflicts.py): a
# missed repeat costs one extra row, a false one loses a fact, so each threshold sits above
# the closest different-meaning pair (MiniLM: "vegetarian"/"vegan" at 0.913). Gemini is not
# measured offline: it gets the conservative default.
DUPLICATE_THRESHOLDS = {"all-MiniLM-L6-v2": 0.93}
HASH_THRESHOLD = 0.82  # HashEmbedder ("hash-<dim>"), the test embedder: above 0.79
DEFAULT_THRESHOLD = 0.95
NEIGHBOURS = 5

_NUMBER_WORDS = frozenset(
    ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
)
_NEGATIONS = frozenset({"not", "no", "never", "without", "nor", "n't", "hates", "dislikes"})
_TOKENS = re.compile(r"[\w@.+'-]+")


def duplicate_threshold(embedding_model: str) -> float:
    if embedding_model.startswith("hash-"):
        return HASH_THRESHOLD
    return DUPLICATE_THRESHOLDS.get(embedding_model, DEFAULT_THRESHOLD)


def distinguishing(text: str) -> frozenset[str]:
    """Words two facts must share to be the same fact: numbers, names, relations, negations."""
    words = _TOKENS.findall(text)
    kept = set()
    for index, word in enumerate(words):
        lower = word.casefold().strip(".'")
        if (
            any(ch.isdigit() for ch in word)
            or "@" in word
            or lower in _NUMBER_WORDS
            or _negation(lower)
            or lower in RELATIONS
            or (index > 0 and word[:1].isupper())
        ):
            kept.add(lower if _negation(lower) else lower.removesuffix("'s").rstrip("s") or lower)
    return frozenset(kept)


def same_statement(a: str, b: str) -> bool:
    """The same negations, and no other distinguishing word on one side only (one side may
    be more specific: "lives in Bern" / "lives in Bern, Switzerland")."""
    mine, theirs = distinguishing(a), distinguishing(b)
    if {w for w in mine if _negation(w)} != {w for w in theirs if _negation(w)}:
        return False
    return mine <= theirs or theirs <= mine


def _negation(word: str) -> bool:
    return word in _NEGATIONS or word.endswith("n't")


@dataclass(frozen=True)
class Proposal:
    """An attributed, embedded draft and the current fact the model said it replaces."""

    draft: FactDraft
    replaces: Fact | None = None


@dataclass
class ChangePlan:
    new_facts: list[FactDraft] = field(default_factory=list)
    supersessions: list[Supersession] = field(default_factory=list)
    reinforcements: list[Reinforcement] = field(default_factory=list)
    conflicts: list[PendingItem] = field(default_factory=list)
    # said before the current fact it contradicts (its task ran late): the newer stays
    outdated: list[FactDraft] = field(default_factory=list)


Nearest = Callable[[FactDraft], list[ScoredFact]]
HoldConflict = Callable[[FactDraft, Fact], PendingItem]


def plan_changes(
    proposals: Sequence[Proposal],
    current: Sequence[Fact],
    nearest: Nearest,
    hold: HoldConflict,
    said_at: datetime | None = None,
) -> ChangePlan:
    """Sort each proposal into new fact, supersession, reinforcement or held conflict.
    ``said_at``: when the proposals were said; one that contradicts a fact said later
    (its task ran after a newer message's) is outdated: the newer fact stays."""
    plan = ChangePlan()
    touched: set[str] = set()  # one old fact is closed or reinforced once per task
    for proposal in proposals:
        draft = proposal.draft
        same_subject = [f for f in current if f.subject_entity_id == draft.subject_entity_id]
        old = _contradicted(proposal, same_subject)
        if old is not None and said_at is not None and old.valid_from > said_at:
            plan.outdated.append(draft)
            continue
        if old is not None and old.id not in touched:
            touched.add(old.id)
            if _needs_the_user(draft, old):
                plan.conflicts.append(hold(draft, old))
            else:
                plan.supersessions.append(Supersession(old_fact_id=old.id, replacement=draft))
            continue
        repeat = _repeat_of(draft, same_subject, nearest)
        if repeat is not None and repeat.id not in touched:
            touched.add(repeat.id)
            plan.reinforcements.append(
                Reinforcement(fact_id=repeat.id, confidence=reinforced(repeat, draft))
            )
        elif repeat is None:
            plan.new_facts.append(draft)
    return plan


def reinforced(old: Fact, draft: FactDraft) -> float:
    """Two independent sightings: 1 - (1 - a)(1 - b), below certainty."""
    combined = 1.0 - (1.0 - old.confidence) * (1.0 - draft.confidence)
    return round(min(MAX_REINFORCED, max(combined, old.confidence)), 4)


def _needs_the_user(draft: FactDraft, old: Fact) -> bool:
    sensitive = draft.type in SENSITIVE_TYPES or old.type in SENSITIVE_TYPES
    return sensitive or draft.confidence < CLEAR_CONFIDENCE


def _contradicted(proposal: Proposal, same_subject: Sequence[Fact]) -> Fact | None:
    draft, named = proposal.draft, proposal.replaces
    slots = slots_of(draft.text)
    # A weak model's ref may point anywhere: only a fact of the same kind is replaced.
    if (
        named is not None
        and named in same_subject
        and fold(named.text) != fold(draft.text)
        and (named.type == draft.type or set(slots) & set(slots_of(named.text)))
    ):
        return named
    if not slots:
        return None
    # the slot decides, whatever type each reader gave ("Work" or "Other")
    clashing = [fact for fact in same_subject if clashes(slots, slots_of(fact.text))]
    return max(clashing, key=lambda fact: fact.valid_from, default=None)


def _repeat_of(draft: FactDraft, same_subject: Sequence[Fact], nearest: Nearest) -> Fact | None:
    text = fold(draft.text)
    for fact in same_subject:
        if fold(fact.text) == text:
            return fact
    threshold = duplicate_threshold(draft.embedding_model)
    subject = draft.subject_entity_id
    for scored in nearest(draft):
        fact = scored.fact
        if (
            fact.subject_entity_id == subject
            and scored.similarity >= threshold
            and same_statement(fact.text, draft.text)
        ):
            return fact
    return None
