"""``SessionMemory`` on PostgreSQL: one encrypted, embedded running summary per chat
(``session_summaries``, 0004_retrieval.sql). A user has one row per chat that was ever
summarized, so the exact distance over their rows needs no vector index."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pgvector import Vector

from shared.adapters.postgres import Database, as_vector, constraints_as_rejected
from shared.adapters.postgres_prepared import Prepared, vector_text
from shared.models.memory import RecallQuery, SessionNote
from shared.ports import KeyRing, SessionCandidate

SESSION_SUMMARY = "session_summaries.summary"


class PostgresSessionMemory:
    def __init__(self, db: Database, keys: KeyRing) -> None:
        self._db = db
        self._keys = keys

    def put_summary(
        self, user_id: str, note: SessionNote, embedding: Sequence[float], model: str
    ) -> bool:
        cipher = self._keys.cipher_for(user_id)
        summary = cipher.encrypt(note.summary, SESSION_SUMMARY)
        with constraints_as_rejected(), self._db.transaction() as cur:
            cur.execute(
                "INSERT INTO session_summaries AS s (user_id, chat_id, summary_enc, embedding,"
                " embedding_model, embedding_dim, started_at, covers_until, updated_at)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, now())"
                " ON CONFLICT (user_id, chat_id) DO UPDATE SET summary_enc = EXCLUDED.summary_enc,"
                " embedding = EXCLUDED.embedding, embedding_model = EXCLUDED.embedding_model,"
                " embedding_dim = EXCLUDED.embedding_dim,"
                " started_at = least(s.started_at, EXCLUDED.started_at),"
                " covers_until = EXCLUDED.covers_until, updated_at = now()"
                " WHERE s.covers_until < EXCLUDED.covers_until",
                (
                    user_id, note.chat_id, summary, Vector(list(embedding)), model,
                    len(embedding), note.started_at, note.covers_until,
                ),
            )  # fmt: skip
            return cur.rowcount > 0

    def recall_sessions(
        self, user_id: str, query: RecallQuery, window: tuple[datetime, datetime] | None
    ) -> list[SessionCandidate]:
        if not query.embedding:
            return []
        where, args = "user_id = %s AND embedding_model = %s AND embedding_dim = %s", []
        args += [user_id, query.embedding_model, len(query.embedding)]
        if window is not None:  # sessions that overlap it
            where += " AND started_at < %s AND covers_until >= %s"
            args += [window[1], window[0]]
        if query.as_of is not None:
            where += " AND started_at <= %s"
            args.append(query.as_of)
        with self._db.connection() as conn:  # a hot path: prepared, the vector rendered once
            rows = Prepared(conn).rows(
                # timestamps as text and vectors in half precision: the rows are parsed
                # while the facts' rows are, and pg8000's timestamp parser is slow
                "SELECT chat_id, summary_enc, started_at::text, covers_until::text,"
                " 1 - (embedding <=> %s::vector) AS similarity,"
                " halfvec_send(embedding::halfvec)"
                f" FROM session_summaries WHERE {where}"
                " ORDER BY similarity DESC, chat_id LIMIT %s",
                [vector_text(query.embedding), *args, query.pool],
            )
        if not rows:
            return []
        cipher = self._keys.cipher_for(user_id)
        return [_candidate(cipher.decrypt(row[1], SESSION_SUMMARY), row) for row in rows]


def _candidate(summary: str, row: Sequence[Any]) -> SessionCandidate:
    chat_id, _, started, until, similarity, embedding = row
    note = SessionNote(
        chat_id=chat_id,
        summary=summary,
        started_at=datetime.fromisoformat(started),
        covers_until=datetime.fromisoformat(until),
    )
    vector = as_vector(embedding, half=True)
    return SessionCandidate(note=note, similarity=float(similarity), embedding=vector)
