"""In-memory ``JobStore`` and ``OperatorAlerts`` (tests): the Firestore semantics, one lock.

Like Firestore, a stored job comes back as its JSON round trip, so a test sees exactly what
a redelivery would read.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from shared.adapters import keyset
from shared.adapters.doc_ids import doc_id
from shared.models.jobs import JobState
from shared.ports import Keyset

R = TypeVar("R")


class FakeJobStore:
    def __init__(self) -> None:
        self._jobs: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()
        self.writes = 0

    def get(self, user_id: str, job_id: str) -> JobState | None:
        raw = self._jobs.get((doc_id(user_id), doc_id(job_id)))
        return None if raw is None else JobState.model_validate_json(raw)

    def list_jobs(self, user_id: str, limit: int, after: Keyset | None = None) -> list[JobState]:
        mine = [JobState.model_validate_json(raw) for (u, _), raw in self._jobs.items()
                if u == doc_id(user_id)]  # fmt: skip
        return keyset.page(mine, lambda j: (j.updated_at, j.job.job_id), limit, after, True)

    def update(
        self,
        user_id: str,
        job_id: str,
        change: Callable[[JobState | None], tuple[R, JobState | None]],
    ) -> R:
        key = (doc_id(user_id), doc_id(job_id))
        with self._lock:
            raw = self._jobs.get(key)
            result, new = change(None if raw is None else JobState.model_validate_json(raw))
            if new is not None:
                self._jobs[key] = new.model_dump_json()
                self.writes += 1
        return result

    def delete_user(self, user_id: str) -> None:
        with self._lock:
            for key in [k for k in self._jobs if k[0] == user_id]:
                del self._jobs[key]


class FakeOperatorAlerts:
    """Records every alert; ``fail`` makes delivery fail (False), as a dead webhook does."""

    def __init__(self, fail: bool = False) -> None:
        self.alerts: list[tuple[str, dict[str, Any]]] = []
        self.fail = fail

    def alert(self, event: str, payload: dict[str, Any]) -> bool:
        if self.fail:
            return False
        self.alerts.append((event, payload))
        return True
