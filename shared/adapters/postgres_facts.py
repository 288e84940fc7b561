"""``FactStore`` on PostgreSQL + pgvector (schema: ``shared/migrations``).

``save_extraction`` records the task key in ``processed_tasks`` and inserts the facts in one
transaction: a redelivered task finds its key taken and writes nothing. Every query filters
by ``user_id``. A fact the schema refuses (orphan, low-confidence health fact, another
user's person, ...) raises ``DataRejected``: the whole extraction is then not recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pg8000.exceptions import DatabaseError
from pgvector import Vector

from shared.adapters.postgres import Database, as_rejected
from shared.models.domain import NewFact, StoredFact

_FACT_COLUMNS = (
    "user_id",
    "subject_entity_id",
    "relation_to_user",
    "text",
    "type",
    "confidence",
    "embedding",
    "embedding_model",
    "embedding_dim",
    "idempotency_key",
    "source_chat_id",
    "source_turn_id",
    "source_message_id",
)


class PostgresFactStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    def save_extraction(self, task_key: str, user_id: str, facts: Sequence[NewFact]) -> bool:
        try:
            with self._db.transaction() as cur:
                cur.execute(
                    "INSERT INTO processed_tasks (task_key, user_id) VALUES (%s, %s) "
                    "ON CONFLICT (task_key) DO NOTHING",
                    (task_key, user_id),
                )
                if cur.rowcount == 0:
                    return False  # already done; the transaction wrote nothing
                if facts:
                    sql, args = _insert_facts(user_id, facts)
                    cur.execute(sql, args)
        except DatabaseError as exc:
            rejected = as_rejected(exc)
            if rejected is None:
                raise
            raise rejected from exc
        return True

    def list_facts(self, user_id: str) -> list[StoredFact]:
        with self._db.transaction() as cur:
            cur.execute(
                "SELECT id, user_id, text, type, subject_entity_id, confidence, source_turn_id,"
                " created_at FROM facts"
                " WHERE user_id = %s AND (valid_to IS NULL OR valid_to > now())"
                " ORDER BY created_at, id",
                (user_id,),
            )
            rows = cur.fetchall()
        return [_stored_fact(row) for row in rows]


def _insert_facts(user_id: str, facts: Sequence[NewFact]) -> tuple[str, list[Any]]:
    """One multi-row INSERT: one round trip whatever the number of facts."""
    row = "(" + ", ".join(["%s"] * len(_FACT_COLUMNS)) + ")"
    sql = (
        f"INSERT INTO facts ({', '.join(_FACT_COLUMNS)}) VALUES "
        + ", ".join([row] * len(facts))
        + " ON CONFLICT (user_id, idempotency_key) DO NOTHING"
    )
    args: list[Any] = []
    for fact in facts:
        args += [
            user_id,
            fact.subject_entity_id,
            fact.relation_to_user,
            fact.text,
            fact.type,
            fact.confidence,
            Vector(fact.embedding),
            fact.embedding_model,
            len(fact.embedding),
            fact.idempotency_key,
            fact.source_chat_id,
            fact.source_turn_id,
            fact.source_message_id,
        ]
    return sql, args


def _stored_fact(row: Sequence[Any]) -> StoredFact:
    fact_id, user_id, text, fact_type, subject, confidence, source_turn_id, created_at = row
    return StoredFact(
        id=str(fact_id),
        user_id=user_id,
        text=text,
        type=fact_type,
        subject_entity_id=str(subject) if subject is not None else None,
        confidence=float(confidence),
        source_turn_id=source_turn_id,
        created_at=created_at,
    )
