"""A fact's versions in the in-memory store: listing, restoring, and the expiry job, with
``postgres_fact_history``'s semantics (append-only: a restore adds a version)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import datetime

from shared.adapters.fact_rules import expiry, is_uuid, same_key
from shared.errors import DataRejected
from shared.fakes.fact_state import FakeFactData, StoredFact, canonical
from shared.models.memory import ExpiredFacts, Fact


def _chain(data: FakeFactData, user_id: str, fact_id: str) -> list[StoredFact]:
    """Every version of the chain holding ``fact_id``, oldest first; [] if not the user's."""
    start = data.facts.get(canonical(fact_id)) if is_uuid(fact_id) else None
    if start is None or start.fact.user_id != user_id:
        return []
    first = start
    while first.supersedes_id is not None and first.supersedes_id in data.facts:
        first = data.facts[first.supersedes_id]
    chain, successors = (
        [first],
        {s.supersedes_id: s for s in data.facts_of(user_id) if s.supersedes_id is not None},
    )
    while chain[-1].fact.id in successors:
        chain.append(successors[chain[-1].fact.id])
    return chain


def versions_of(data: FakeFactData, user_id: str, fact_id: str) -> list[Fact]:
    with data.lock:
        chain = _chain(data, user_id, fact_id)
    return sorted((s.fact for s in chain), key=lambda f: (f.valid_from, f.created_at), reverse=True)


def restore_version(
    data: FakeFactData, user_id: str, version_id: str, now: datetime
) -> Fact | None:
    chain = _chain(data, user_id, version_id)
    if not chain:
        return None
    version, latest = data.facts[canonical(version_id)], chain[-1]
    same = same_key(latest.idempotency_key, version.idempotency_key)
    if same and latest.current():
        return latest.fact
    if latest.current():
        data.update_fact(latest.fact.id, valid_to=now, ended_by="superseded", updated_at=now)
    key = version.idempotency_key
    if any(s.current() and same_key(s.idempotency_key, key) for s in data.facts_of(user_id)):
        raise DataRejected("another current fact already says what this version said")
    old = version.fact
    fact = old.model_copy(
        update={
            "id": str(uuid.uuid4()),
            "subject_entity_id": latest.fact.subject_entity_id,
            "relation_to_user": latest.fact.relation_to_user,
            "valid_from": now,
            "valid_to": None,
            "ended_by": None,
            "seen_count": 1,
            "last_seen_at": now,
            "created_at": now,
            "updated_at": now,
            "expires_at": expiry(old.durability, now, old.time_anchor),
        }
    )
    data.facts[fact.id] = replace(version, fact=fact, supersedes_id=latest.fact.id)
    return fact


class FakeFactExpiry:
    """The expiry job over the in-memory store's facts of every user."""

    def __init__(self, data: FakeFactData) -> None:
        self._data = data

    def expire_due(self, now: datetime, limit: int) -> ExpiredFacts:
        with self._data.lock:
            due = [
                s
                for s in self._data.facts.values()
                if s.current() and s.fact.expires_at is not None and s.fact.expires_at <= now
            ]
            due.sort(key=lambda s: (s.fact.expires_at or now, s.fact.id))
            users = []
            for stored in due[:limit]:
                fact = stored.fact
                self._data.update_fact(
                    fact.id, valid_to=fact.expires_at, ended_by="expired", updated_at=now
                )
                users.append(fact.user_id)
        return ExpiredFacts(closed=len(users), user_ids=sorted(set(users)))
