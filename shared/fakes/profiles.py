"""In-memory ``ProfileStore`` with the Firestore adapter's semantics (tests/contract)."""

from __future__ import annotations

import threading
from datetime import datetime

from shared.adapters.doc_ids import doc_id
from shared.models.domain import AssistantProfile


class FakeProfileStore:
    def __init__(self) -> None:
        self._profiles: dict[str, AssistantProfile] = {}
        self._lock = threading.Lock()

    def get_profile(self, user_id: str) -> AssistantProfile:
        with self._lock:
            stored = self._profiles.get(doc_id(user_id))
        return stored.model_copy(deep=True) if stored else AssistantProfile()

    def put_profile(self, user_id: str, profile: AssistantProfile, now: datetime) -> None:
        stored = profile.model_copy(update={"updated_at": now}, deep=True)
        with self._lock:
            self._profiles[doc_id(user_id)] = stored
