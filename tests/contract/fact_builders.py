"""Builders for the fact-system contract tests: drafts, persons, extractions, vectors."""

from __future__ import annotations

import math
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from shared.models.memory import (
    ExtractionChanges,
    FactDraft,
    FactFilter,
    PendingItem,
    Person,
)
from tests.contract.conftest import FactBackend, unique

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
MODEL = "test-3"
HISTORY = FactFilter(include_history=True)
CURRENT = FactFilter()


def at_angle(degrees: float, dims: int = 3) -> list[float]:
    """A unit vector whose cosine similarity with ``axis()`` is cos(degrees)."""
    rad = math.radians(degrees)
    return [math.cos(rad), math.sin(rad)] + [0.0] * (dims - 2)


def with_similarity(similarity: float) -> list[float]:
    return at_angle(math.degrees(math.acos(similarity)))


def axis(dims: int = 3) -> list[float]:
    return [1.0] + [0.0] * (dims - 1)


def draft(key: str, **changes: Any) -> FactDraft:
    values: dict[str, Any] = {
        "text": f"fact {key}",
        "type": "Preference",
        "confidence": 0.8,
        "idempotency_key": key,
        "embedding": at_angle(30),
        "embedding_model": MODEL,
    }
    return FactDraft.model_validate(values | changes)


def about(person: Person, key: str, **changes: Any) -> FactDraft:
    return draft(key, subject_entity_id=person.id, relation_to_user=person.role_to_user, **changes)


def person(user_id: str, name: str, **changes: Any) -> Person:
    values: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "user_id": user_id,
        "display_name": name,
        "role_to_user": "friend",
    }
    return Person.model_validate(values | changes)


def pending(user_id: str, **changes: Any) -> PendingItem:
    values: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "user_id": user_id,
        "chat_id": "chat-1",
        "kind": "disambiguation",
        "mention": "Martin",
        "created_at": T0,
    }
    return PendingItem.model_validate(values | changes)


def apply(
    backend: FactBackend, user_id: str, now: datetime = T0, task: str | None = None, **changes: Any
) -> bool:
    """One extraction task (a fresh task key unless given) with these changes."""
    return backend.facts.apply_extraction(
        task or unique("task"), user_id, ExtractionChanges.model_validate(changes), now
    )


def texts(backend: FactBackend, user_id: str, where: FactFilter = CURRENT) -> list[str]:
    return sorted(f.text for f in backend.facts.list_facts(user_id, where))


def days(n: float) -> timedelta:
    return timedelta(days=n)
