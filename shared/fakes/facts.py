"""In-memory ``FactStore``, ``ContactStore`` and ``PendingStore`` for unit tests.

They share one ``FakeFactData`` so the schema's cross-table rules hold (a fact names only
its user's person; deleting a person deletes its facts; a merge moves them)::

    contacts = FakeContactStore()
    facts = FakeFactStore(contacts, clock)
    pending = FakePendingStore(contacts)

Same semantics as the PostgreSQL adapters (``tests/contract`` runs one test file against
both), with exact search in place of HNSW and plaintext in place of ciphertext.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta

from shared.adapters.clock import SystemClock
from shared.adapters.fact_rules import expiry, is_uuid, merged_person, sort_persons, uuids
from shared.conversation.text import fold
from shared.errors import DataRejected
from shared.fakes.fact_history import restore_version, versions_of
from shared.fakes.fact_recall import recall
from shared.fakes.fact_search import in_window, nearest, search
from shared.fakes.fact_state import FakeFactData, canonical, check_role
from shared.models.memory import (
    SELF,
    ExtractionChanges,
    Fact,
    FactDraft,
    FactFilter,
    PendingItem,
    Person,
    RecallQuery,
    ScoredFact,
    SemanticQuery,
    TaskStatus,
    TemporalQuery,
)
from shared.ports import Clock, RecallCandidate


class FakeContactStore:
    def __init__(self, clock: Clock | None = None) -> None:
        self.data = FakeFactData()
        self.clock = clock or SystemClock()

    def list_persons(self, user_id: str) -> list[Person]:
        return sort_persons([p for p in self.data.persons.values() if p.user_id == user_id])

    def get_person(self, user_id: str, person_id: str) -> Person | None:
        return self.data.person_of(user_id, person_id)

    def find_by_name(self, user_id: str, name: str) -> list[Person]:
        wanted = fold(name)
        return [
            p
            for p in self.list_persons(user_id)
            if wanted in {fold(n) for n in [p.display_name, *p.aliases]}
        ]

    def add_person(self, person: Person) -> None:
        with self.data.lock:
            self.data.insert_person(person, self.clock.now())

    def update_person(self, person: Person, unchanged_since: datetime | None = None) -> bool:
        with self.data.lock:
            old = self.data.person_of(person.user_id, person.id)
            if old is None or unchanged_since not in (None, old.updated_at):
                return False
            check_role(person)
            now = self.clock.now()
            if old.updated_at is not None:  # strictly later, as PostgreSQL's GREATEST(...)
                now = max(now, old.updated_at + timedelta(microseconds=1))
            self.data.persons[old.id] = person.model_copy(
                update={"id": old.id, "created_at": old.created_at, "updated_at": now}
            )
            return True

    def merge_persons(self, user_id: str, keep_id: str, absorb_id: str) -> bool:
        with self.data.lock:
            keep = self.data.person_of(user_id, keep_id)
            absorb = self.data.person_of(user_id, absorb_id)
            if keep is None or absorb is None or keep.id == absorb.id:
                return False
            now = self.clock.now()
            for fact_id, stored in list(self.data.facts.items()):
                if stored.fact.subject_entity_id == absorb.id:
                    self.data.update_fact(
                        fact_id,
                        subject_entity_id=keep.id,
                        relation_to_user=keep.role_to_user,
                        updated_at=now,
                    )
            del self.data.persons[absorb.id]
            merged = merged_person(keep, absorb)
            self.data.persons[keep.id] = merged.model_copy(update={"updated_at": now})
            return True

    def delete_person(self, user_id: str, person_id: str) -> bool:
        with self.data.lock:
            return self.data.delete_person(user_id, person_id)


class FakeFactStore:
    """Facts may name only persons of ``contacts`` (the foreign key of the real schema)."""

    def __init__(
        self, contacts: FakeContactStore | None = None, clock: Clock | None = None
    ) -> None:
        self.contacts = contacts or FakeContactStore(clock)
        self.data = self.contacts.data
        self._clock = clock or self.contacts.clock
        self._holds: dict[str, int] = {}  # holders per user (0 or 1); an erasure waits
        self._holding = threading.Condition()

    @contextmanager
    def hold_user(self, user_id: str) -> Iterator[None]:
        with self._holding:  # holders of one user run one at a time
            self._holding.wait_for(lambda: not self._holds.get(user_id))
            self._holds[user_id] = 1
        try:
            yield
        finally:
            with self._holding:
                self._holds[user_id] -= 1
                self._holding.notify_all()

    def apply_extraction(
        self,
        task_key: str,
        user_id: str,
        changes: ExtractionChanges,
        now: datetime,
        issued_at: datetime | None = None,
    ) -> bool:
        owners = {p.user_id for p in [*changes.new_persons, *changes.learned_persons]}
        owners |= {i.user_id for i in changes.pending}
        if owners - {user_id}:
            raise DataRejected("an extraction may only write rows of its own user")
        with self.data.lock:
            erased_at = self.data.erased.get(user_id)
            if issued_at is not None and erased_at is not None and issued_at <= erased_at:
                return False
            if task_key in self.data.done_tasks:
                return False
            work = self.data.snapshot()
            work.done_tasks[task_key] = user_id
            for person in changes.new_persons:
                work.insert_person(person, now)
            for person in changes.learned_persons:
                work.learn_person(person, now)
            for supersession in changes.supersessions:
                if not _close(work, user_id, supersession.old_fact_id, now):
                    raise DataRejected(f"fact {supersession.old_fact_id} is not current")
            for s in changes.supersessions:
                work.insert_fact(user_id, s.replacement, now, canonical(s.old_fact_id))
            for draft in changes.new_facts:
                work.insert_fact(user_id, draft, now)
            for reinforcement in changes.reinforcements:
                _reinforce(work, user_id, reinforcement.fact_id, reinforcement.confidence, now)
            for item in changes.pending:
                work.insert_pending(user_id, item)
            self.data.commit(work)
        return True

    def current_facts(self, user_id: str, subject_ids: Sequence[str | None]) -> list[Fact]:
        wanted = {*uuids(subject_ids), *([None] if None in subject_ids else [])}
        found = [
            s.fact
            for s in self.data.facts_of(user_id)
            if s.current() and s.fact.subject_entity_id in wanted
        ]
        return _by_creation(found)

    def nearest(
        self, user_id: str, embedding: Sequence[float], embedding_model: str, limit: int
    ) -> list[ScoredFact]:
        return nearest(self.data.facts_of(user_id), embedding, embedding_model, limit)

    def search(self, user_id: str, query: SemanticQuery, now: datetime) -> list[ScoredFact]:
        return search(self.data.facts_of(user_id), query, now)

    def in_window(self, user_id: str, query: TemporalQuery) -> list[Fact]:
        return in_window(self.data.facts_of(user_id), query)

    def recall(self, user_id: str, query: RecallQuery, now: datetime) -> list[RecallCandidate]:
        return recall(self.data.facts_of(user_id), query, now)

    def facts_by_id(self, user_id: str, fact_ids: Sequence[str]) -> list[Fact]:
        found = [self.get_fact(user_id, fact_id) for fact_id in fact_ids]
        return [fact for fact in found if fact is not None]

    def versions(self, user_id: str, fact_id: str) -> list[Fact]:
        return versions_of(self.data, user_id, fact_id)

    def restore_version(self, user_id: str, version_id: str, now: datetime) -> Fact | None:
        with self.data.lock:
            work = self.data.snapshot()
            restored = restore_version(work, user_id, version_id, now)
            self.data.commit(work)
            return restored

    def list_facts(self, user_id: str, where: FactFilter) -> list[Fact]:
        found = [s.fact for s in self.data.facts_of(user_id)]
        if where.subject_id == SELF:
            found = [f for f in found if f.subject_entity_id is None]
        elif where.subject_id is not None:
            found = [f for f in found if f.subject_entity_id in uuids([where.subject_id])]
        if where.fact_type is not None:
            found = [f for f in found if f.type == where.fact_type]
        if not where.include_history:
            found = [f for f in found if f.valid_to is None]
        if (after := where.after) is not None:
            found = [f for f in found if (f.created_at, f.id) > (after.created_at, after.id)]
        return _by_creation(found)[: where.limit]

    def get_fact(self, user_id: str, fact_id: str) -> Fact | None:
        stored = self.data.facts.get(canonical(fact_id)) if is_uuid(fact_id) else None
        return stored.fact if stored is not None and stored.fact.user_id == user_id else None

    def correct_fact(
        self, user_id: str, fact_id: str, replacement: FactDraft, now: datetime
    ) -> Fact | None:
        if not is_uuid(fact_id):
            return None
        with self.data.lock:
            work = self.data.snapshot()
            if not _close(work, user_id, fact_id, now):
                return None
            fact = work.insert_fact(user_id, replacement, now, canonical(fact_id))
            if fact is None:
                raise DataRejected("another current fact has the replacement's idempotency key")
            self.data.commit(work)
            return fact

    def delete_fact(self, user_id: str, fact_id: str) -> bool:
        if self.get_fact(user_id, fact_id) is None:
            return False
        with self.data.lock:
            chain: list[str] = []
            current: str | None = canonical(fact_id)
            while current is not None and current in self.data.facts and current not in chain:
                chain.append(current)
                current = self.data.facts[current].supersedes_id
            return self.data.delete_facts(user_id, chain) > 0

    def reassign_facts(self, user_id: str, fact_ids: Sequence[str], person_id: str) -> int:
        with self.data.lock:
            person = self.data.person_of(user_id, person_id)
            if person is None:
                return 0
            mine = {s.fact.id for s in self.data.facts_of(user_id)}
            moved = set(uuids(fact_ids)) & mine
            for fact_id in moved:
                self.data.update_fact(
                    fact_id,
                    subject_entity_id=person.id,
                    relation_to_user=person.role_to_user,
                    updated_at=self._clock.now(),
                )
            return len(moved)

    def task_status(self, user_id: str, task_key: str) -> TaskStatus:
        with self.data.lock:
            return TaskStatus(
                done=task_key in self.data.done_tasks, erased_at=self.data.erased.get(user_id)
            )

    def delete_user(self, user_id: str, now: datetime) -> None:
        with self._holding:
            self._holding.wait_for(lambda: not self._holds.get(user_id))
        with self.data.lock:
            data = self.data
            data.erased[user_id] = max(now, data.erased.get(user_id, now))
            data.pending = {k: v for k, v in data.pending.items() if v.user_id != user_id}
            data.facts = {k: v for k, v in data.facts.items() if v.fact.user_id != user_id}
            data.persons = {k: v for k, v in data.persons.items() if v.user_id != user_id}
            data.done_tasks = {t: u for t, u in data.done_tasks.items() if u != user_id}
            data.sessions = {k: v for k, v in data.sessions.items() if k[0] != user_id}


class FakePendingStore:
    def __init__(self, store: FakeContactStore | FakeFactStore | None = None) -> None:
        self.data = store.data if store is not None else FakeFactData()

    def list_pending(self, user_id: str, chat_id: str | None = None) -> list[PendingItem]:
        found = [
            item
            for item in self.data.pending.values()
            if item.user_id == user_id
            and item.resolved_at is None
            and (chat_id is None or item.chat_id == chat_id)
        ]
        return sorted(found, key=lambda item: (item.created_at, item.id))

    def get_pending(self, user_id: str, item_id: str) -> PendingItem | None:
        item = self.data.pending.get(canonical(item_id)) if is_uuid(item_id) else None
        return item if item is not None and item.user_id == user_id else None

    def resolve_pending(self, user_id: str, item_id: str, now: datetime) -> PendingItem | None:
        with self.data.lock:
            item = self.get_pending(user_id, item_id)
            if item is None or item.resolved_at is not None:
                return None
            resolved = item.model_copy(update={"resolved_at": now})
            self.data.pending[item.id] = resolved
            return resolved


def _close(data: FakeFactData, user_id: str, fact_id: str, now: datetime) -> bool:
    stored = data.current_fact(user_id, fact_id)
    if stored is None:
        return False
    data.update_fact(stored.fact.id, valid_to=now, ended_by="superseded", updated_at=now)
    return True


def _reinforce(
    data: FakeFactData, user_id: str, fact_id: str, confidence: float, now: datetime
) -> None:
    stored = data.current_fact(user_id, fact_id)
    if stored is None:
        return
    fact = stored.fact
    data.update_fact(
        fact.id,
        confidence=max(fact.confidence, confidence),
        seen_count=fact.seen_count + 1,
        last_seen_at=now,
        updated_at=now,
        expires_at=expiry(fact.durability, now, fact.time_anchor),
    )


def _by_creation(facts: list[Fact]) -> list[Fact]:
    return sorted(facts, key=lambda f: (f.created_at, f.id))
