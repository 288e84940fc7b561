"""``FactStore`` on PostgreSQL + pgvector (schema: ``shared/migrations/0002_memory.sql``).

Fact text and temporal markers are encrypted with the user's data key before they reach the
database (``postgres_memory_rows``); idempotency keys are stored as keyed hashes. Every
statement filters by ``user_id``, including the ones that name a row by its id.

``apply_extraction`` is one transaction: the task key in ``processed_tasks`` first (a
redelivered task finds it taken and writes nothing), then new persons, supersessions (close
the old fact, insert its replacement), new facts, reinforcements and pending items. A row
the schema refuses raises ``DataRejected`` and nothing of the task is written.

Retrieval SQL (``search``, ``nearest``, ``in_window``) lives in ``postgres_fact_search``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from shared.adapters.fact_rules import expires_sql, is_uuid, uuids
from shared.adapters.postgres import Cursor, Database, constraints_as_rejected
from shared.adapters.postgres_erasure import erased_since, lock_user, user_hash
from shared.adapters.postgres_fact_history import close_fact, restore_version, versions_of
from shared.adapters.postgres_fact_recall import recall
from shared.adapters.postgres_fact_search import FactSearch
from shared.adapters.postgres_memory_rows import (
    FACT_COLUMNS,
    INSERT_PENDING_SQL,
    INSERT_PERSON_SQL,
    LEARN_PERSON_SQL,
    fact_from_row,
    fact_row,
    insert_facts_sql,
    learn_person_args,
    pending_insert_args,
    person_insert_args,
)
from shared.errors import DataRejected
from shared.models.memory import (
    SELF,
    ExtractionChanges,
    Fact,
    FactDraft,
    FactFilter,
    RecallQuery,
    ScoredFact,
    SemanticQuery,
    TaskStatus,
    TemporalQuery,
)
from shared.ports import KeyRing, RecallCandidate, UserCipher

_ON_CURRENT_KEY = "ON CONFLICT (user_id, idempotency_hash) WHERE valid_to IS NULL DO NOTHING"
# A fact and every version it replaced, walked back through supersedes_id.
_HISTORY_CTE = (
    "WITH RECURSIVE chain AS ("
    " SELECT id, supersedes_id FROM facts WHERE user_id = %s AND id = %s"
    " UNION SELECT f.id, f.supersedes_id FROM facts f JOIN chain c ON f.id = c.supersedes_id"
    " WHERE f.user_id = %s)"
)


class PostgresFactStore:
    def __init__(self, db: Database, keys: KeyRing, *, ef_search: int = 200) -> None:
        self._db = db
        self._keys = keys
        self._search = FactSearch(db, keys, ef_search=ef_search)
        self._held = threading.local()

    # -- writes ---------------------------------------------------------------------------
    def apply_extraction(
        self,
        task_key: str,
        user_id: str,
        changes: ExtractionChanges,
        now: datetime,
        issued_at: datetime | None = None,
    ) -> bool:
        _check_owner(user_id, changes)
        cipher = self._keys.cipher_for(user_id)
        rows = _encode(cipher, user_id, changes, now)  # encrypted before the transaction
        with constraints_as_rejected(), self._db.transaction() as cur:
            locked = user_id in self._holding()
            if issued_at is not None and erased_since(cur, user_id, issued_at, locked):
                return False  # the user erased the account after this work was queued
            cur.execute(
                "INSERT INTO processed_tasks (task_key, user_id) VALUES (%s, %s)"
                " ON CONFLICT (task_key) DO NOTHING",
                (task_key, user_id),
            )
            if cur.rowcount == 0:
                return False  # done before; this transaction wrote nothing
            for args in rows.persons:
                cur.execute(INSERT_PERSON_SQL, args)
            for person in changes.learned_persons:
                cur.execute(LEARN_PERSON_SQL, learn_person_args(cipher, person, now))
            for supersession in changes.supersessions:
                if not _close(cur, user_id, supersession.old_fact_id, now):
                    raise DataRejected(f"fact {supersession.old_fact_id} is not current")
            if rows.facts:
                cur.execute(insert_facts_sql(len(rows.facts), _ON_CURRENT_KEY), _flat(rows.facts))
            for reinforcement in changes.reinforcements:
                _reinforce(cur, user_id, reinforcement.fact_id, reinforcement.confidence, now)
            for args in rows.pending:
                cur.execute(INSERT_PENDING_SQL, args)
        return True

    def correct_fact(
        self, user_id: str, fact_id: str, replacement: FactDraft, now: datetime
    ) -> Fact | None:
        if not is_uuid(fact_id):
            return None
        cipher = self._keys.cipher_for(user_id)
        row = fact_row(cipher, user_id, replacement, now, supersedes_id=fact_id)
        with constraints_as_rejected(), self._db.transaction() as cur:
            if not _close(cur, user_id, fact_id, now):
                return None
            cur.execute(f"{insert_facts_sql(1, _ON_CURRENT_KEY)} RETURNING {FACT_COLUMNS}", row)
            inserted = cur.fetchone()
            if inserted is None:
                raise DataRejected("another current fact has the replacement's idempotency key")
        return fact_from_row(cipher, inserted)

    def delete_fact(self, user_id: str, fact_id: str) -> bool:
        if not is_uuid(fact_id):
            return False
        with self._db.transaction() as cur:
            cur.execute(
                f"{_HISTORY_CTE} DELETE FROM facts WHERE user_id = %s"
                " AND id IN (SELECT id FROM chain)",
                (user_id, fact_id, user_id, user_id),
            )
            return cur.rowcount > 0

    def reassign_facts(self, user_id: str, fact_ids: Sequence[str], person_id: str) -> int:
        ids = uuids(fact_ids)
        if not ids or not is_uuid(person_id):
            return 0
        with constraints_as_rejected(), self._db.transaction() as cur:
            cur.execute(
                "UPDATE facts f SET subject_entity_id = p.id, relation_to_user = p.role_to_user,"
                " updated_at = now() FROM persons p"
                " WHERE p.user_id = %s AND p.id = %s AND f.user_id = %s"
                " AND f.id = ANY(%s::uuid[])",
                (user_id, person_id, user_id, ids),
            )
            return cur.rowcount

    @contextmanager
    def hold_user(self, user_id: str) -> Iterator[None]:
        """Two session locks held for the block, on a connection of its own: the user's
        shared lock (seed 4), so an erasure waits until the block ended and work starting
        after an erasure sees it; then an exclusive one (seed 5) that only holders take, so
        they run one at a time and the turn's other writes never wait for them."""
        with self._db.session() as cur:
            cur.execute("SELECT pg_advisory_lock_shared(hashtextextended(%s, 4))", (user_id,))
            cur.execute("SELECT pg_advisory_lock(hashtextextended(%s, 5))", (user_id,))
            held = self._holding()
            held.add(user_id)
            try:
                yield
            finally:
                held.discard(user_id)
                cur.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 5))", (user_id,))
                cur.execute("SELECT pg_advisory_unlock_shared(hashtextextended(%s, 4))", (user_id,))

    def _holding(self) -> set[str]:
        """Users this thread holds: its writes for them need no lock of their own (asking
        for one behind a waiting erasure would wait for the erasure, which waits for us)."""
        held: set[str] | None = getattr(self._held, "users", None)
        if held is None:
            held = self._held.users = set()
        return held

    def delete_user(self, user_id: str, now: datetime) -> None:
        with self._db.transaction() as cur:
            lock_user(cur, user_id)
            cur.execute(
                "INSERT INTO erased_users (user_hash, erased_at) VALUES (%s, %s)"
                " ON CONFLICT (user_hash) DO UPDATE"
                " SET erased_at = GREATEST(erased_users.erased_at, EXCLUDED.erased_at)",
                (user_hash(user_id), now),
            )
            tables = ("pending_items", "session_summaries", "facts", "persons", "processed_tasks")
            for table in (*tables, "fact_terms", "fact_term_totals"):
                cur.execute(f"DELETE FROM {table} WHERE user_id = %s", (user_id,))
        self._keys.forget(user_id)

    def task_status(self, user_id: str, task_key: str) -> TaskStatus:
        with self._db.transaction() as cur:
            cur.execute(
                "SELECT EXISTS (SELECT 1 FROM processed_tasks WHERE task_key = %s),"
                " (SELECT erased_at FROM erased_users WHERE user_hash = %s)",
                (task_key, user_hash(user_id)),
            )
            done, erased_at = cur.fetchone()
        return TaskStatus(done=bool(done), erased_at=erased_at)

    # -- reads ----------------------------------------------------------------------------
    def current_facts(self, user_id: str, subject_ids: Sequence[str | None]) -> list[Fact]:
        about_user = None in subject_ids
        return self._select(
            user_id,
            "valid_to IS NULL AND (subject_entity_id = ANY(%s::uuid[])"
            " OR (%s AND subject_entity_id IS NULL)) ORDER BY created_at, id",
            [uuids(subject_ids), about_user],
        )

    def list_facts(self, user_id: str, where: FactFilter) -> list[Fact]:
        clauses, args = ["TRUE"], list[Any]()
        if where.subject_id == SELF:
            clauses.append("subject_entity_id IS NULL")
        elif where.subject_id is not None:
            if not is_uuid(where.subject_id):
                return []
            clauses.append("subject_entity_id = %s")
            args.append(where.subject_id)
        if where.fact_type is not None:
            clauses.append("type = %s")
            args.append(where.fact_type)
        if not where.include_history:
            clauses.append("valid_to IS NULL")
        if where.after is not None:
            if not is_uuid(where.after.id):
                return []
            clauses.append("(created_at, id) > (%s, %s::uuid)")
            args += [where.after.created_at, where.after.id]
        order = " ORDER BY created_at, id LIMIT %s"
        return self._select(user_id, " AND ".join(clauses) + order, [*args, where.limit])

    def get_fact(self, user_id: str, fact_id: str) -> Fact | None:
        if not is_uuid(fact_id):
            return None
        found = self._select(user_id, "id = %s", [fact_id])
        return found[0] if found else None

    def nearest(
        self, user_id: str, embedding: Sequence[float], embedding_model: str, limit: int
    ) -> list[ScoredFact]:
        return self._search.nearest(user_id, embedding, embedding_model, limit)

    def search(self, user_id: str, query: SemanticQuery, now: datetime) -> list[ScoredFact]:
        return self._search.search(user_id, query, now)

    def in_window(self, user_id: str, query: TemporalQuery) -> list[Fact]:
        return self._search.in_window(user_id, query)

    def recall(self, user_id: str, query: RecallQuery, now: datetime) -> list[RecallCandidate]:
        return recall(self._db, self._keys, user_id, query, now)

    def facts_by_id(self, user_id: str, fact_ids: Sequence[str]) -> list[Fact]:
        ids = uuids(fact_ids)
        if not ids:
            return []
        found = {f.id: f for f in self._select(user_id, "id = ANY(%s::uuid[])", [ids])}
        return [found[i] for i in ids if i in found]

    def versions(self, user_id: str, fact_id: str) -> list[Fact]:
        if not is_uuid(fact_id):
            return []
        return versions_of(self._db, self._keys, user_id, fact_id)

    def restore_version(self, user_id: str, version_id: str, now: datetime) -> Fact | None:
        if not is_uuid(version_id):
            return None
        return restore_version(self._db, self._keys, user_id, version_id, now)

    def _select(self, user_id: str, where: str, args: list[Any]) -> list[Fact]:
        """``where`` filters by ``user_id`` (its first placeholder)."""
        with self._db.transaction() as cur:
            cur.execute(
                f"SELECT {FACT_COLUMNS} FROM facts WHERE user_id = %s AND {where}", [user_id, *args]
            )
            rows = cur.fetchall()
        if not rows:
            return []  # no key is created for a user who has nothing
        cipher = self._keys.cipher_for(user_id)
        return [fact_from_row(cipher, row) for row in rows]


@dataclass
class _Rows:
    persons: list[list[Any]]
    facts: list[list[Any]]
    pending: list[list[Any]]


def _encode(cipher: UserCipher, user_id: str, changes: ExtractionChanges, now: datetime) -> _Rows:
    """Every row of the task, encrypted: replacements first, in the order of their closes."""
    replacements = [
        fact_row(cipher, user_id, s.replacement, now, supersedes_id=s.old_fact_id)
        for s in changes.supersessions
    ]
    return _Rows(
        persons=[person_insert_args(cipher, p, now) for p in changes.new_persons],
        facts=replacements + [fact_row(cipher, user_id, d, now) for d in changes.new_facts],
        pending=[pending_insert_args(cipher, item) for item in changes.pending],
    )


def _check_owner(user_id: str, changes: ExtractionChanges) -> None:
    """One user's task writes that user's rows only."""
    owners = {p.user_id for p in [*changes.new_persons, *changes.learned_persons]}
    owners |= {i.user_id for i in changes.pending}
    if owners - {user_id}:
        raise DataRejected("an extraction may only write rows of its own user")


def _close(cur: Cursor, user_id: str, fact_id: str, now: datetime) -> bool:
    """Supersede: end the current fact's validity now. False if it is not a current fact."""
    return close_fact(cur, user_id, fact_id, now)


def _reinforce(cur: Cursor, user_id: str, fact_id: str, confidence: float, now: datetime) -> None:
    """Seen again: keep the higher confidence, count it. A fact no longer current is left."""
    cur.execute(
        "UPDATE facts SET confidence = GREATEST(confidence, %s), seen_count = seen_count + 1,"
        f" last_seen_at = %s, updated_at = %s, expires_at = {expires_sql()}"
        " WHERE user_id = %s AND id = %s AND valid_to IS NULL",
        (confidence, now, now, now, now, user_id, fact_id),
    )


def _flat(rows: list[list[Any]]) -> list[Any]:
    return [value for row in rows for value in row]
