"""In-memory ``CalendarFeedStore`` with the Firestore adapter's semantics."""

from __future__ import annotations

import threading

from shared.models.calendar_feed import FeedGrant


class FakeCalendarFeedStore:
    def __init__(self) -> None:
        self._grants: dict[str, FeedGrant] = {}
        self._lock = threading.Lock()

    def get_feed(self, user_id: str) -> FeedGrant | None:
        with self._lock:
            return self._grants.get(user_id)

    def put_feed(self, user_id: str, grant: FeedGrant) -> FeedGrant:
        with self._lock:
            return self._grants.setdefault(user_id, grant)

    def replace_feed(self, user_id: str, grant: FeedGrant) -> FeedGrant:
        with self._lock:
            self._grants[user_id] = grant
        return grant

    def delete_feed(self, user_id: str) -> None:
        with self._lock:
            self._grants.pop(user_id, None)

    def feed_owner(self, digest: str) -> str | None:
        with self._lock:
            owners = [user for user, grant in self._grants.items() if grant.digest == digest]
        return owners[0] if owners else None
