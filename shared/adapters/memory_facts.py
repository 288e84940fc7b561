"""In-memory ``FactStore`` and ``ContactStore`` enforcing the same rules as the schema."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Sequence
from datetime import datetime

from shared.adapters.clock import SystemClock
from shared.errors import DataRejected
from shared.models.domain import NewFact, Person, StoredFact
from shared.ports import Clock

PERSON_ROLES = frozenset(
    {
        "partner",
        "child",
        "parent",
        "sibling",
        "friend",
        "colleague",
        "pet",
        "service_provider",
        "other",
    }
)
SENSITIVE_TYPES = frozenset({"Allergy", "Medical", "Health"})


class MemoryContactStore:
    def __init__(self) -> None:
        self._persons: dict[str, Person] = {}
        self._lock = threading.Lock()

    def list_persons(self, user_id: str) -> list[Person]:
        mine = [p for p in self._persons.values() if p.user_id == user_id]
        return sorted(mine, key=lambda p: (p.display_name, p.id))

    def add_person(self, person: Person) -> None:
        _check_uuid(person.id)
        if person.role_to_user not in PERSON_ROLES:
            raise DataRejected(f"role_to_user {person.role_to_user!r} is not allowed")
        with self._lock:
            self._persons.setdefault(person.id, person)

    def owns(self, user_id: str, person_id: str) -> bool:
        person = self._persons.get(person_id)
        return person is not None and person.user_id == user_id


class MemoryFactStore:
    """Facts may name only persons of ``contacts`` (the foreign key of the real schema)."""

    def __init__(
        self, contacts: MemoryContactStore | None = None, clock: Clock | None = None
    ) -> None:
        self._contacts = contacts or MemoryContactStore()
        self._clock = clock or SystemClock()
        self._facts: list[tuple[StoredFact, str]] = []  # with its idempotency key
        self._done_tasks: set[str] = set()
        self._lock = threading.Lock()

    def save_extraction(self, task_key: str, user_id: str, facts: Sequence[NewFact]) -> bool:
        with self._lock:
            if task_key in self._done_tasks:
                return False
            for fact in facts:
                self._check(user_id, fact)
            now = self._clock.now()
            keys = {key for stored, key in self._facts if stored.user_id == user_id}
            for fact in facts:
                if fact.idempotency_key in keys:
                    continue
                keys.add(fact.idempotency_key)
                self._facts.append((_stored(user_id, fact, now), fact.idempotency_key))
            self._done_tasks.add(task_key)
        return True

    def list_facts(self, user_id: str) -> list[StoredFact]:
        mine = [stored for stored, _ in self._facts if stored.user_id == user_id]
        return sorted(mine, key=lambda f: (f.created_at, f.id))

    def _check(self, user_id: str, fact: NewFact) -> None:
        if fact.subject_entity_id is None and fact.relation_to_user != "self":
            raise DataRejected("facts_subject_or_self: a fact needs a subject or to be 'self'")
        if fact.type in SENSITIVE_TYPES and fact.confidence < 0.9:
            raise DataRejected("facts_sensitive_confidence: health facts need confidence >= 0.9")
        if fact.subject_entity_id is not None:
            _check_uuid(fact.subject_entity_id)
            if not self._contacts.owns(user_id, fact.subject_entity_id):
                raise DataRejected("facts_subject_fkey: no such person for this user")
        if not fact.embedding:
            raise DataRejected("an embedding needs at least one dimension")


def _stored(user_id: str, fact: NewFact, now: datetime) -> StoredFact:
    return StoredFact.model_validate(
        {
            "id": str(uuid.uuid4()),
            "user_id": user_id,
            "text": fact.text,
            "type": fact.type,
            "subject_entity_id": fact.subject_entity_id,
            "confidence": fact.confidence,
            "source_turn_id": fact.source_turn_id,
            "created_at": now,
        }
    )


def _check_uuid(value: str) -> None:
    try:
        uuid.UUID(value)
    except ValueError as exc:
        raise DataRejected(f"not a uuid: {value!r}") from exc
