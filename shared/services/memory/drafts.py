"""Attributed facts turned into storable drafts: embedded, time-anchored, keyed.

Health facts (Allergy, Medical, Health) are stored only when the model was sure (>= 0.8),
then with confidence raised to the schema's 0.9 floor and high sensitivity; an unsure one is
dropped rather than stored as a near-certainty. Idempotency keys derive from (user, subject,
normalised text), so the same statement about the same subject is one row however often it
is extracted. Time markers are read at the moment the message was sent (``enqueued_at``), in
the user's zone: a task retried after midnight still means the same "tomorrow".
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field, replace
from datetime import datetime

from shared.conversation.slots import plainly
from shared.conversation.text import fold
from shared.models.domain import ExtractionTask
from shared.models.memory import (
    CRITICAL_MIN_CONFIDENCE,
    SELF,
    SENSITIVE_TYPES,
    Fact,
    FactDraft,
    PendingItem,
    Person,
    Source,
)
from shared.ports import Embedder
from shared.services.memory.attribution import Attributed
from shared.services.memory.resolution import Resolution
from shared.services.memory.temporal import resolve_anchor

NAMESPACE = uuid.UUID("3b0f5e2a-7c1d-4e8b-9a6f-1d2c3b4a5e6f")  # ids derived from the task
SURE = 0.8  # a health fact below this is not stored at all


def idempotency_key(user_id: str, subject: str | None, text: str) -> str:
    return hashlib.sha256(f"{user_id}\x1f{subject or SELF}\x1f{fold(text)}".encode()).hexdigest()


def derived_id(*parts: str) -> str:
    return str(uuid.uuid5(NAMESPACE, "\x1f".join(parts)))


@dataclass(frozen=True)
class HeldDraft:
    draft: FactDraft
    replaces: str | None  # the model's ref of the fact it replaces ("F2")


@dataclass
class HeldMention:
    resolution: Resolution
    drafts: list[FactDraft] = field(default_factory=list)


@dataclass
class Held:
    attributed: list[HeldDraft] = field(default_factory=list)
    mentions: list[HeldMention] = field(default_factory=list)
    new_persons: list[Person] = field(default_factory=list)
    learned: list[Person] = field(default_factory=list)  # known persons, with new names
    skipped: int = 0

    @property
    def empty(self) -> bool:
        """Nothing to store or to hold for an answer (skipped facts aside)."""
        return not (self.attributed or self.mentions or self.learned)


class Drafter:
    def __init__(self, task: ExtractionTask, task_key: str, embedder: Embedder) -> None:
        self._task = task
        self._key = task_key
        self._embedder = embedder

    def draft(self, attributed: list[Attributed]) -> Held:
        held = Held()
        kept = [a for a in attributed if _storable(a)]
        held.skipped = len(attributed) - len(kept)
        # a correction's words ("actually", "now") are not part of the fact
        kept = [replace(a, fact=a.fact.model_copy(update={"text": plainly(a.fact.text)}))
                for a in kept]  # fmt: skip
        vectors = self._embedder.embed([a.fact.text for a in kept]) if kept else []
        seen: set[str] = set()
        mentions: dict[str, HeldMention] = {}
        for item, vector in zip(kept, vectors, strict=True):
            draft = self._draft(item, vector)
            if draft.idempotency_key in seen:
                continue
            seen.add(draft.idempotency_key)
            resolution = item.resolution
            if resolution.outcome == "ambiguous":
                mentions.setdefault(fold(resolution.mention), HeldMention(resolution))
                mentions[fold(resolution.mention)].drafts.append(draft)
                continue
            held.attributed.append(HeldDraft(draft, item.fact.replaces))
            person = resolution.person
            if resolution.outcome == "new" and person and person not in held.new_persons:
                held.new_persons.append(person)
        held.mentions = list(mentions.values())
        return held

    def _draft(self, item: Attributed, vector: list[float]) -> FactDraft:
        fact, resolution, task = item.fact, item.resolution, self._task
        subject, relation, key_subject = _subject(resolution)
        critical = fact.type in SENSITIVE_TYPES
        confidence = max(fact.confidence, CRITICAL_MIN_CONFIDENCE) if critical else fact.confidence
        return FactDraft(
            text=fact.text,
            type=fact.type,
            subject_entity_id=subject,
            relation_to_user=relation,
            confidence=confidence,
            avatar_id=task.avatar_id,
            durability=fact.durability,
            sensitivity="high" if critical else fact.sensitivity,
            temporal_marker=fact.temporal_marker,
            time_anchor=resolve_anchor(
                fact.temporal_marker, fact.date, task.enqueued_at, task.timezone
            ),
            source=Source(chat_id=task.chat_id, turn_id=task.turn_id, message_id=task.message_id),
            embedding=vector,
            embedding_model=self._embedder.model_name,
            idempotency_key=idempotency_key(task.user_id, key_subject, fact.text),
        )


def _storable(item: Attributed) -> bool:
    if item.resolution.outcome == "skip":
        return False
    return item.fact.type not in SENSITIVE_TYPES or item.fact.confidence >= SURE


def _subject(resolution: Resolution) -> tuple[str | None, str, str | None]:
    """(subject id, relation to the user, the subject the idempotency key names)."""
    person = resolution.person
    if resolution.outcome in ("person", "new") and person is not None:
        return person.id, person.role_to_user, person.id
    if resolution.outcome == "ambiguous":
        # Held: no subject yet, and not "self" either, so the schema would refuse to store
        # it as is; the user's answer attributes it.
        role = person.role_to_user if person else "other"
        return None, role, f"mention:{fold(resolution.mention)}"
    return None, SELF, None


def hold_conflict(
    task: ExtractionTask, task_key: str, draft: FactDraft, old: Fact, now: datetime
) -> PendingItem:
    return PendingItem(
        id=derived_id(task_key, "conflict", draft.idempotency_key),
        user_id=task.user_id,
        chat_id=task.chat_id,
        kind="fact_conflict",
        conflicting_fact_id=old.id,
        facts=[draft],
        created_at=now,
    )


def hold_mention(
    task: ExtractionTask, task_key: str, held: HeldMention, now: datetime
) -> PendingItem:
    resolution = held.resolution
    return PendingItem(
        id=derived_id(task_key, "mention", fold(resolution.mention)),
        user_id=task.user_id,
        chat_id=task.chat_id,
        kind="disambiguation",
        mention=resolution.mention,
        candidate_ids=list(resolution.candidate_ids),
        proposed_person=resolution.person,
        facts=held.drafts,
        created_at=now,
    )
