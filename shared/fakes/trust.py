"""In-memory ``TrustStore`` with the Firestore adapter's semantics (tests/contract)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime

from shared.adapters.doc_ids import doc_id
from shared.models.trust import HitlMode, TrustRecord


class FakeTrustStore:
    def __init__(self) -> None:
        self._records: dict[str, TrustRecord] = {}
        self._lock = threading.Lock()  # one update at a time, as Firestore's compare-and-set

    def get(self, user_id: str) -> TrustRecord:
        key = doc_id(user_id)
        with self._lock:
            return self._records.get(key) or TrustRecord()

    def update(
        self, user_id: str, change: Callable[[TrustRecord], TrustRecord], now: datetime
    ) -> TrustRecord:
        key = doc_id(user_id)
        with self._lock:
            current = self._records.get(key) or TrustRecord()
            stored = change(current).model_copy(update={"updated_at": now})
            self._records[key] = stored
        return stored

    def put_settings(
        self, user_id: str, pinned_mode: HitlMode | None, now: datetime
    ) -> TrustRecord:
        return self.update(
            user_id, lambda record: record.model_copy(update={"pinned_mode": pinned_mode}), now
        )

    def delete_user(self, user_id: str) -> None:
        """What account erasure does to the Firestore document (``users/{uid}`` and below)."""
        with self._lock:
            self._records.pop(doc_id(user_id), None)

    def fenced(self, since: datetime) -> FakeTrustStore:
        """The fakes know no erasure mark: every write goes through."""
        return self
