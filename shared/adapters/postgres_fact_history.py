"""A fact's versions on PostgreSQL: closing one, listing them, restoring an earlier one, and
the expiry job that closes facts whose durability ran out.

A version chain is linked by ``supersedes_id`` (each version names the one it replaced);
exactly one version of a chain is current (``valid_to IS NULL``) unless the chain expired.
Nothing here deletes: a restore appends a copy of the earlier version that supersedes the
latest one, so the history stays append-only and "as of" reads stay true.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from shared.adapters.fact_rules import expires_sql
from shared.adapters.postgres import Cursor, Database, constraints_as_rejected
from shared.adapters.postgres_memory_rows import FACT_COLUMNS, fact_from_row
from shared.errors import DataRejected
from shared.models.memory import ExpiredFacts, Fact
from shared.ports import KeyRing

# Every version of the chain holding a fact: back to its first, then forward to its latest.
# Parameters: user, fact id, user, user.
_CHAIN_CTE = (
    "WITH RECURSIVE back AS ("
    " SELECT id, supersedes_id FROM facts WHERE user_id = %s AND id = %s"
    " UNION SELECT f.id, f.supersedes_id FROM facts f JOIN back b ON f.id = b.supersedes_id"
    " WHERE f.user_id = %s),"
    " forth AS (SELECT id FROM back WHERE supersedes_id IS NULL"
    " UNION SELECT f.id FROM facts f JOIN forth c ON f.supersedes_id = c.id"
    " WHERE f.user_id = %s),"
    " chain AS (SELECT id FROM back UNION SELECT id FROM forth)"
)


def _chain_args(user_id: str, fact_id: str) -> list[Any]:
    return [user_id, fact_id, user_id, user_id]


_COPIED = (
    "avatar_id, text_enc, type, confidence, scope, durability, sensitivity, temporal_marker_enc,"
    " time_anchor, source_chat_id, source_turn_id, source_message_id, embedding,"
    " embedding_model, embedding_dim, idempotency_hash, terms"
)


def close_fact(
    cur: Cursor, user_id: str, fact_id: str, now: datetime, ended_by: str = "superseded"
) -> bool:
    """End the current fact's validity now. False if it is not a current fact."""
    cur.execute(
        "UPDATE facts SET valid_to = %s, ended_by = %s, updated_at = %s"
        " WHERE user_id = %s AND id = %s AND valid_to IS NULL",
        (now, ended_by, now, user_id, fact_id),
    )
    return cur.rowcount > 0


def versions_of(db: Database, keys: KeyRing, user_id: str, fact_id: str) -> list[Fact]:
    """Every version of the fact's chain, the latest first; [] if it is not the user's."""
    with db.transaction() as cur:
        cur.execute(
            f"{_CHAIN_CTE} SELECT {FACT_COLUMNS} FROM facts WHERE user_id = %s"
            " AND id IN (SELECT id FROM chain) ORDER BY valid_from DESC, created_at DESC, id",
            [*_chain_args(user_id, fact_id), user_id],
        )
        rows = cur.fetchall()
    if not rows:
        return []
    cipher = keys.cipher_for(user_id)
    return [fact_from_row(cipher, row) for row in rows]


def restore_version(
    db: Database, keys: KeyRing, user_id: str, version_id: str, now: datetime
) -> Fact | None:
    """Make an earlier version current again: its copy supersedes the chain's latest version
    (closing it if it is current), under the latest version's subject. A retry finds the
    copy already latest and changes nothing. None: no such version of the user."""
    with constraints_as_rejected(), db.transaction() as cur:
        cur.execute(
            f"{_CHAIN_CTE} SELECT f.id, f.valid_to IS NULL, f.idempotency_hash = v.idempotency_hash"
            " FROM facts f, facts v WHERE f.user_id = %s AND v.user_id = %s AND v.id = %s"
            " AND f.id IN (SELECT id FROM chain) AND NOT EXISTS (SELECT 1 FROM facts n"
            " WHERE n.user_id = %s AND n.supersedes_id = f.id) FOR UPDATE OF f",
            [*_chain_args(user_id, version_id), user_id, user_id, version_id, user_id],
        )
        latest = cur.fetchone()
        if latest is None:
            return None
        latest_id, current, same = str(latest[0]), bool(latest[1]), bool(latest[2])
        if same and current:  # the latest already says what the version said
            return _one(cur, keys, user_id, latest_id)
        if current:
            close_fact(cur, user_id, latest_id, now)
        cur.execute(_restore_sql(), _restore_args(user_id, version_id, latest_id, now))
        inserted = cur.fetchone()
        if inserted is None:
            raise DataRejected("another current fact already says what this version said")
        return _one(cur, keys, user_id, str(inserted[0]))


def _restore_sql() -> str:
    return (
        f"INSERT INTO facts (id, user_id, subject_entity_id, relation_to_user, {_COPIED},"
        " valid_from, supersedes_id, seen_count, last_seen_at, created_at, updated_at,"
        " expires_at)"
        f" SELECT gen_random_uuid(), v.user_id, l.subject_entity_id, l.relation_to_user,"
        f" {', '.join('v.' + c.strip() for c in _COPIED.split(','))},"
        f" %s, l.id, 1, %s, %s, %s, {expires_sql('v.')}"
        " FROM facts v, facts l WHERE v.user_id = %s AND v.id = %s AND l.user_id = %s"
        " AND l.id = %s ON CONFLICT (user_id, idempotency_hash) WHERE valid_to IS NULL"
        " DO NOTHING RETURNING id"
    )


def _restore_args(user_id: str, version_id: str, latest_id: str, now: datetime) -> list[Any]:
    return [now, now, now, now, now, now, user_id, version_id, user_id, latest_id]


def _one(cur: Cursor, keys: KeyRing, user_id: str, fact_id: str) -> Fact:
    cur.execute(
        f"SELECT {FACT_COLUMNS} FROM facts WHERE user_id = %s AND id = %s", (user_id, fact_id)
    )
    return fact_from_row(keys.cipher_for(user_id), cur.fetchone())


class PostgresFactExpiry:
    """The expiry job's store: every user's facts whose time ran out, closed in batches."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def expire_due(self, now: datetime, limit: int) -> ExpiredFacts:
        """Close up to ``limit`` due facts with ``valid_to = expires_at`` (when they left
        retrieval, so "as of" reads stay exact). Rows another run holds are skipped."""
        with self._db.transaction() as cur:
            cur.execute(
                "WITH due AS (SELECT id FROM facts WHERE valid_to IS NULL"
                " AND expires_at IS NOT NULL AND expires_at <= %s ORDER BY expires_at, id"
                " LIMIT %s FOR UPDATE SKIP LOCKED)"
                " UPDATE facts f SET valid_to = f.expires_at, ended_by = 'expired',"
                " updated_at = %s FROM due WHERE f.id = due.id RETURNING f.user_id",
                (now, limit, now),
            )
            users = [str(row[0]) for row in cur.fetchall()]
        return ExpiredFacts(closed=len(users), user_ids=sorted(set(users)))
