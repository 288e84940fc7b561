"""Re-embedding of stored facts after a change of embedding model (an operator's job).

Embedding spaces never mix: every vector records its model and dimension, search only
compares vectors of the query's model, and this adapter finds the facts (current and
history, every user) whose vector is of another model, so a batch job can migrate them.
"""

from __future__ import annotations

from collections.abc import Sequence

from pgvector import Vector

from shared.adapters.postgres import Database
from shared.adapters.postgres_memory_rows import FACT_TEXT
from shared.models.memory import StaleFact
from shared.ports import KeyRing


class PostgresEmbeddingMigration:
    def __init__(self, db: Database, keys: KeyRing) -> None:
        self._db = db
        self._keys = keys

    def stale(self, embedding_model: str, limit: int) -> list[StaleFact]:
        """Up to ``limit`` facts whose vector is not of ``embedding_model``."""
        with self._db.transaction() as cur:
            cur.execute(
                "SELECT user_id, id, text_enc, embedding_model FROM facts"
                " WHERE embedding_model <> %s ORDER BY user_id, id LIMIT %s",
                (embedding_model, limit),
            )
            rows = cur.fetchall()
        return [
            StaleFact(
                user_id=str(user),
                fact_id=str(fact_id),
                text=self._keys.cipher_for(str(user)).decrypt(bytes(text_enc), FACT_TEXT),
                embedding_model=str(model),
            )
            for user, fact_id, text_enc, model in rows
        ]

    def replace_embeddings(
        self, updates: Sequence[tuple[StaleFact, list[float]]], embedding_model: str
    ) -> int:
        """Write new vectors in one transaction; a fact already migrated is left alone."""
        changed = 0
        with self._db.transaction() as cur:
            for stale, vector in updates:
                cur.execute(
                    "UPDATE facts SET embedding = %s, embedding_model = %s, embedding_dim = %s,"
                    " updated_at = now() WHERE user_id = %s AND id = %s AND embedding_model = %s",
                    (Vector(vector), embedding_model, len(vector), stale.user_id,
                     stale.fact_id, stale.embedding_model),
                )  # fmt: skip
                changed += cur.rowcount
        return changed
