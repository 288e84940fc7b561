"""In-memory ``SessionMemory``, sharing ``FakeFactData`` with the fact fakes (so erasing a
user erases their sessions), with ``postgres_sessions``' semantics."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np

from shared.fakes.fact_search import similarity
from shared.fakes.fact_state import FakeFactData, StoredSession
from shared.models.memory import RecallQuery, SessionNote
from shared.ports import SessionCandidate


class FakeSessionMemory:
    def __init__(self, data: FakeFactData) -> None:
        self.data = data

    def put_summary(
        self, user_id: str, note: SessionNote, embedding: Sequence[float], model: str
    ) -> bool:
        with self.data.lock:
            key = (user_id, note.chat_id)
            old = self.data.sessions.get(key)
            if old is not None:
                if old.note.covers_until >= note.covers_until:
                    return False
                started = min(old.note.started_at, note.started_at)
                note = note.model_copy(update={"started_at": started})
            self.data.sessions[key] = StoredSession(note, tuple(embedding), model)
            return True

    def recall_sessions(
        self, user_id: str, query: RecallQuery, window: tuple[datetime, datetime] | None
    ) -> list[SessionCandidate]:
        with self.data.lock:
            stored = [s for (user, _), s in self.data.sessions.items() if user == user_id]
        found = [
            SessionCandidate(
                note=s.note,
                similarity=similarity(query.embedding, s.embedding),
                embedding=np.asarray(s.embedding, dtype=np.float32),
            )
            for s in stored
            if s.model == query.embedding_model
            and len(s.embedding) == len(query.embedding)
            and (
                window is None
                or (s.note.started_at < window[1] and s.note.covers_until >= window[0])
            )
            and (query.as_of is None or s.note.started_at <= query.as_of)
        ]
        found.sort(key=lambda c: (-c.similarity, c.note.chat_id))
        return found[: query.pool]


def _overlaps(note: SessionNote, window: tuple[datetime, datetime]) -> bool:
    return note.started_at < window[1] and note.covers_until >= window[0]
