"""In-memory ``ExecutionMemory`` for unit tests: the PostgreSQL adapter's semantics
(``tests/contract`` runs one test file against both), plaintext in place of ciphertext.

Given ``erased_at`` (when a user erased the account, as ``FakeFactStore.delete_user``
records it), it refuses a job made before the erasure, as the real adapter does.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from shared.models.history import Execution, ExecutionDraft, HistoryQuery, StrategyFeedback


@dataclass(frozen=True)
class _Stored:
    execution: Execution
    embedding: tuple[float, ...]


class FakeExecutionStore:
    def __init__(self, erased_at: Callable[[str], datetime | None] | None = None) -> None:
        self._erased_at = erased_at
        self._runs: dict[tuple[str, str], _Stored] = {}  # (user, job) -> run
        self._feedback: dict[tuple[str, str], StrategyFeedback] = {}  # (user, key) -> word
        self._lock = threading.Lock()

    def record(self, draft: ExecutionDraft, issued_at: datetime) -> bool:
        erased = self._erased_at(draft.user_id) if self._erased_at else None
        with self._lock:
            if erased is not None and issued_at <= erased:
                return False
            if (draft.user_id, draft.job_id) in self._runs:
                return False
            self._runs[(draft.user_id, draft.job_id)] = _stored(draft)
            for key in draft.rejected:
                self._feedback.setdefault(
                    (draft.user_id, key),
                    StrategyFeedback(
                        user_id=draft.user_id,
                        key=key,
                        kind="rejected_step",
                        strategy_id=draft.strategy_id,
                        created_at=draft.created_at,
                        expires_at=draft.expires_at,
                    ),
                )
            self._purge(draft.created_at)
        return True

    def related(self, user_id: str, query: HistoryQuery, now: datetime) -> list[Execution]:
        with self._lock:
            comparable = [
                (_cosine(s.embedding, query.embedding), s)
                for s in self._live(user_id, now)
                if s.execution.embedding_model == query.embedding_model
                and len(s.embedding) == len(query.embedding)
            ]
            comparable.sort(key=lambda pair: -pair[0])
            strategies = {s.execution.strategy_id for _, s in comparable[: query.limit]}
            found = [
                self._view(s.execution, now, similarity)
                for similarity, s in comparable
                if s.execution.strategy_id in strategies
            ]
        return sorted(found, key=lambda e: (-(e.similarity or 0.0), _newest(e), e.id))

    def add_feedback(self, feedback: StrategyFeedback) -> bool:
        with self._lock:
            key = (feedback.user_id, feedback.key)
            if key in self._feedback:
                return False
            strategy_id = feedback.strategy_id
            if feedback.job_id is not None:
                run = self._runs.get((feedback.user_id, feedback.job_id))
                if run is None or run.execution.expires_at <= feedback.created_at:
                    return False
                strategy_id = run.execution.strategy_id
            self._feedback[key] = feedback.model_copy(
                update={"strategy_id": strategy_id, "job_id": None}
            )
            return True

    def list_executions(self, user_id: str, now: datetime, limit: int) -> list[Execution]:
        if not 1 <= limit <= 1000:
            raise ValueError("limit must be 1..1000")
        with self._lock:
            found = [self._view(s.execution, now, None) for s in self._live(user_id, now)]
        return sorted(found, key=lambda e: (_newest(e), e.id))[:limit]

    def forget_strategy(self, user_id: str, strategy_id: str) -> int:
        return self._forget(user_id, strategy_id)

    def forget_all(self, user_id: str) -> int:
        return self._forget(user_id, None)

    def _forget(self, user_id: str, strategy_id: str | None) -> int:
        def chosen(owner: str, strategy: str | None) -> bool:
            return owner == user_id and strategy_id in (None, strategy)

        with self._lock:
            runs = [k for k, s in self._runs.items() if chosen(k[0], s.execution.strategy_id)]
            for k in runs:
                del self._runs[k]
            for k in [k for k, f in self._feedback.items() if chosen(k[0], f.strategy_id)]:
                del self._feedback[k]
        return len(runs)

    def _live(self, user_id: str, now: datetime) -> list[_Stored]:
        return [
            s
            for (owner, _), s in self._runs.items()
            if owner == user_id and s.execution.expires_at > now
        ]

    def _view(self, execution: Execution, now: datetime, similarity: float | None) -> Execution:
        penalties = sum(
            1
            for (owner, _), f in self._feedback.items()
            if owner == execution.user_id
            and f.strategy_id == execution.strategy_id
            and f.expires_at > now
        )
        return execution.model_copy(update={"penalties": penalties, "similarity": similarity})

    def _purge(self, now: datetime) -> None:
        for k in [k for k, s in self._runs.items() if s.execution.expires_at <= now]:
            del self._runs[k]
        for k in [k for k, f in self._feedback.items() if f.expires_at <= now]:
            del self._feedback[k]


def _stored(draft: ExecutionDraft) -> _Stored:
    fields = draft.model_dump(exclude={"embedding", "rejected"})
    execution = Execution.model_validate({**fields, "id": str(uuid.uuid4())})
    return _Stored(execution, tuple(draft.embedding))


def _newest(execution: Execution) -> float:
    return -execution.created_at.timestamp()


def _cosine(a: tuple[float, ...] | list[float], b: list[float]) -> float:
    """On float32, as pgvector stores vectors."""
    x, y = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    norms = float(np.linalg.norm(x)) * float(np.linalg.norm(y))
    return float(np.dot(x.astype(np.float64), y.astype(np.float64))) / norms if norms else 0.0
