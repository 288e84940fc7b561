"""The state the in-memory fact-system fakes share, and the schema's rules over it.

``FakeFactData`` holds persons, facts (with their embeddings, idempotency keys and the fact
each replaced), pending items and processed task keys. The methods named after a constraint
of ``0002_memory.sql`` refuse what the database refuses, with ``DataRejected``. Writes are
applied to a copy that replaces the state only when every step passed: a refused row leaves
nothing behind, as the real transaction does.
"""

from __future__ import annotations

import copy
import threading
import uuid
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import get_args

from shared.adapters.fact_rules import check_draft, expiry, fact_terms, is_uuid, same_key
from shared.errors import DataRejected
from shared.models.memory import (
    CRITICAL_MIN_CONFIDENCE,
    SELF,
    SENSITIVE_TYPES,
    Fact,
    FactDraft,
    PendingItem,
    Person,
    PersonRole,
    SessionNote,
)


def canonical(value: str) -> str:
    """The uuid as PostgreSQL prints it; ``DataRejected`` for anything else (SQLSTATE 22P02)."""
    try:
        return str(uuid.UUID(value))
    except ValueError as exc:
        raise DataRejected(f"not a uuid: {value!r}") from exc


@dataclass(frozen=True)
class StoredFact:
    fact: Fact
    embedding: tuple[float, ...]
    idempotency_key: str
    supersedes_id: str | None = None
    terms: tuple[str, ...] = ()  # the keyword channel's, in clear (the database hashes them)

    def current(self) -> bool:
        return self.fact.valid_to is None

    def valid_at(self, moment: datetime, as_of: bool) -> bool:
        """Current and unexpired now, or (``as_of``) valid and unexpired at ``moment``."""
        fact = self.fact
        if as_of:
            held = fact.valid_from <= moment and (fact.valid_to is None or fact.valid_to > moment)
        else:
            held = fact.valid_to is None
        return held and (fact.expires_at is None or fact.expires_at > moment)


@dataclass(frozen=True)
class StoredSession:
    note: SessionNote
    embedding: tuple[float, ...]
    model: str


class FakeFactData:
    def __init__(self) -> None:
        self.persons: dict[str, Person] = {}
        self.facts: dict[str, StoredFact] = {}
        self.pending: dict[str, PendingItem] = {}
        self.done_tasks: dict[str, str] = {}  # task key -> user id
        self.erased: dict[str, datetime] = {}  # user id -> when the account was erased
        self.sessions: dict[tuple[str, str], StoredSession] = {}  # (user, chat) -> summary
        self.lock = threading.RLock()

    def snapshot(self) -> FakeFactData:
        """A copy to write on; ``commit`` it once every step succeeded."""
        draft = copy.copy(self)
        draft.persons, draft.facts = dict(self.persons), dict(self.facts)
        draft.pending, draft.done_tasks = dict(self.pending), dict(self.done_tasks)
        return draft

    def commit(self, draft: FakeFactData) -> None:
        self.persons, self.facts = draft.persons, draft.facts
        self.pending, self.done_tasks = draft.pending, draft.done_tasks

    # -- persons --------------------------------------------------------------------------
    def person_of(self, user_id: str, person_id: str) -> Person | None:
        person = self.persons.get(person_id) if is_uuid(person_id) else None
        if person is None or person.user_id != user_id:
            return None
        return person

    def learn_person(self, person: Person, now: datetime) -> None:
        """Names and descriptors, if the person is unchanged since ``person.updated_at``."""
        stored = self.person_of(person.user_id, person.id)
        if stored is None or stored.updated_at != person.updated_at:
            return
        self.persons[stored.id] = stored.model_copy(
            update={
                "display_name": person.display_name,
                "aliases": person.aliases,
                "descriptors": person.descriptors,
                "updated_at": max(now, (stored.updated_at or now) + timedelta(microseconds=1)),
            }
        )

    def insert_person(self, person: Person, now: datetime) -> None:
        """``ON CONFLICT (id) DO NOTHING``, timestamps defaulting to now."""
        person_id = canonical(person.id)
        check_role(person)
        if person_id in self.persons:
            return
        created = person.created_at or now
        self.persons[person_id] = person.model_copy(
            update={
                "id": person_id,
                "created_at": created,
                "updated_at": person.updated_at or created,
            }
        )

    def delete_person(self, user_id: str, person_id: str) -> bool:
        if self.person_of(user_id, person_id) is None:
            return False
        person_id = canonical(person_id)
        del self.persons[person_id]
        doomed = [i for i, s in self.facts.items() if s.fact.subject_entity_id == person_id]
        self.delete_facts(user_id, doomed)  # facts_subject_fkey ON DELETE CASCADE
        return True

    # -- facts ----------------------------------------------------------------------------
    def facts_of(self, user_id: str) -> list[StoredFact]:
        return [s for s in self.facts.values() if s.fact.user_id == user_id]

    def current_fact(self, user_id: str, fact_id: str) -> StoredFact | None:
        stored = self.facts.get(canonical(fact_id))
        if stored is None or stored.fact.user_id != user_id or not stored.current():
            return None
        return stored

    def check_fact(self, user_id: str, draft: FactDraft) -> None:
        check_draft(draft)
        subject = draft.subject_entity_id
        if subject is None and draft.relation_to_user != SELF:
            raise DataRejected("facts_subject_or_self: a fact needs a subject or to be 'self'")
        if subject is not None and draft.relation_to_user == SELF:
            raise DataRejected("facts_self_has_no_subject: 'self' facts name no person")
        if draft.relation_to_user not in (SELF, *get_args(PersonRole)):
            raise DataRejected("facts_relation_to_user_check: a role or 'self', not free text")
        if draft.type in SENSITIVE_TYPES and draft.confidence < CRITICAL_MIN_CONFIDENCE:
            raise DataRejected("facts_sensitive_confidence: health facts need confidence >= 0.9")
        if subject is not None and self.person_of(user_id, canonical(subject)) is None:
            raise DataRejected("facts_subject_fkey: no such person for this user")

    def insert_fact(
        self,
        user_id: str,
        draft: FactDraft,
        now: datetime,
        supersedes_id: str | None = None,
    ) -> Fact | None:
        """``ON CONFLICT (user_id, idempotency_hash) WHERE valid_to IS NULL DO NOTHING``."""
        self.check_fact(user_id, draft)
        taken = any(
            same_key(s.idempotency_key, draft.idempotency_key) and s.current()
            for s in self.facts_of(user_id)
        )
        if taken:
            return None
        fact = new_fact(user_id, draft, now)
        self.facts[fact.id] = StoredFact(
            fact,
            tuple(draft.embedding),
            draft.idempotency_key,
            supersedes_id,
            tuple(fact_terms(draft.text, draft.temporal_marker)),
        )
        return fact

    def update_fact(self, fact_id: str, **changes: object) -> None:
        stored = self.facts[fact_id]
        self.facts[fact_id] = replace(stored, fact=stored.fact.model_copy(update=changes))

    def delete_facts(self, user_id: str, fact_ids: list[str]) -> int:
        doomed = {i for i in fact_ids if i in self.facts and self.facts[i].fact.user_id == user_id}
        for fact_id in doomed:
            del self.facts[fact_id]
        for fact_id, stored in list(self.facts.items()):
            if stored.supersedes_id in doomed:  # facts_supersedes_fkey ON DELETE SET NULL
                self.facts[fact_id] = replace(stored, supersedes_id=None)
        for item_id, item in list(self.pending.items()):
            if item.conflicting_fact_id in doomed:  # ON DELETE SET NULL (conflicting_fact_id)
                self.pending[item_id] = item.model_copy(update={"conflicting_fact_id": None})
        return len(doomed)

    # -- pending items --------------------------------------------------------------------
    def insert_pending(self, user_id: str, item: PendingItem) -> None:
        """``ON CONFLICT (id) DO NOTHING``; the conflicting fact must be the user's."""
        item_id = canonical(item.id)
        conflicting = item.conflicting_fact_id
        if conflicting is not None:
            conflicting = canonical(conflicting)
            stored = self.facts.get(conflicting)
            if stored is None or stored.fact.user_id != user_id:
                raise DataRejected("pending_items_conflicting_fact_fkey: no such fact")
        if item_id not in self.pending:
            self.pending[item_id] = item.model_copy(
                update={"id": item_id, "conflicting_fact_id": conflicting}
            )


def check_role(person: Person) -> None:
    if person.role_to_user not in get_args(PersonRole):  # a model built without validation
        raise DataRejected(f"persons_role_to_user_check: {person.role_to_user!r}")


def new_fact(user_id: str, draft: FactDraft, now: datetime) -> Fact:
    subject = draft.subject_entity_id
    return Fact(
        id=str(uuid.uuid4()),
        user_id=user_id,
        avatar_id=draft.avatar_id,
        subject_entity_id=None if subject is None else canonical(subject),
        relation_to_user=draft.relation_to_user,
        text=draft.text,
        type=draft.type,
        confidence=draft.confidence,
        scope=draft.scope,
        durability=draft.durability,
        sensitivity=draft.sensitivity,
        temporal_marker=draft.temporal_marker,
        time_anchor=draft.time_anchor,
        valid_from=now,
        source=draft.source,
        embedding_model=draft.embedding_model,
        embedding_dim=len(draft.embedding),
        last_seen_at=now,
        created_at=now,
        updated_at=now,
        expires_at=expiry(draft.durability, now, draft.time_anchor),
    )
