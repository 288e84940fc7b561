"""In-memory ``Cache`` and ``IdempotencyStore`` with the Redis/Firestore semantics."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

from shared.adapters.clock import SystemClock
from shared.ports import Clock


class FakeCache:
    """Expiry follows the injected clock, so a test moves time instead of sleeping."""

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = clock or SystemClock()
        self._values: dict[str, tuple[bytes, datetime]] = {}
        self._lock = threading.Lock()

    def _live(self, key: str) -> tuple[bytes, datetime] | None:
        entry = self._values.get(key)
        if entry is not None and entry[1] <= self._clock.now():
            del self._values[key]
            return None
        return entry

    def get(self, key: str) -> bytes | None:
        with self._lock:
            entry = self._live(key)
        return entry[0] if entry else None

    def set(self, key: str, value: bytes, ttl_seconds: int) -> None:
        if ttl_seconds <= 0:
            raise ValueError("ttl_seconds must be positive")
        with self._lock:
            self._values[key] = (value, self._clock.now() + timedelta(seconds=ttl_seconds))

    def delete(self, *keys: str) -> None:
        with self._lock:
            for key in keys:
                self._values.pop(key, None)

    def hit(self, key: str, window_seconds: int) -> int:
        if window_seconds <= 0:
            raise ValueError("window_seconds must be positive")
        with self._lock:
            entry = self._live(key)
            if entry is None:
                count, expires = 1, self._clock.now() + timedelta(seconds=window_seconds)
            else:
                count, expires = int(entry[0]) + 1, entry[1]  # Redis counters are strings too
            self._values[key] = (str(count).encode(), expires)
        return count


class FakeIdempotencyStore:
    """Keys are never forgotten (the real store guarantees refusal for at least the TTL)."""

    def __init__(self) -> None:
        self._claimed: set[str] = set()
        self._lock = threading.Lock()

    def claim(self, key: str, now: datetime, ttl_seconds: int) -> bool:
        with self._lock:
            if key in self._claimed:
                return False
            self._claimed.add(key)
        return True

    def release(self, key: str) -> None:
        with self._lock:
            self._claimed.discard(key)
