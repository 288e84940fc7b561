"""``Cache`` on Redis (redis-py, client injected), every key under ``{prefix}:``.

Calls go through the instance's circuit breaker for Redis (``breaker``): while Redis is
down they fail at once instead of after the socket timeout. A ``delete`` that failed is
remembered and done as soon as Redis answers again (deletes are idempotent): a cached
context invalidated during an outage is not served stale after it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import redis

from shared.adapters.breaker import CircuitBreaker
from shared.adapters.redis_calls import redis_call
from shared.errors import DependencyUnavailable

MAX_DEFERRED_DELETES = 10_000  # beyond it the oldest are dropped; their values expire anyway


class RedisCache:
    def __init__(
        self, client: redis.Redis, prefix: str, breaker: CircuitBreaker | None = None
    ) -> None:
        self._client = client
        self._prefix = prefix
        self._breaker = breaker
        self._deferred: dict[str, None] = {}  # insertion-ordered set of full key names
        self._lock = threading.Lock()

    def _key(self, key: str) -> str:
        return f"{self._prefix}:{key}"

    @contextmanager
    def _call(self) -> Iterator[None]:
        with redis_call(self._breaker):
            yield
        self._replay_deferred()

    def get(self, key: str) -> bytes | None:
        with self._call():
            value = self._client.get(self._key(key))
        if value is None or isinstance(value, bytes):
            return value
        raise TypeError("RedisCache needs a client built with decode_responses=False")

    def set(self, key: str, value: bytes, ttl_seconds: int) -> None:
        if ttl_seconds <= 0:
            raise ValueError("ttl_seconds must be positive")
        with self._call():
            self._client.set(self._key(key), value, ex=ttl_seconds)

    def delete(self, *keys: str) -> None:
        if not keys:
            return
        names = [self._key(k) for k in keys]
        try:
            with self._call():
                self._client.delete(*names)
        except DependencyUnavailable:
            self._defer(names)
            raise

    def hit(self, key: str, window_seconds: int) -> int:
        """Fixed window: the first hit starts the key's expiry, later hits leave it alone."""
        if window_seconds <= 0:
            raise ValueError("window_seconds must be positive")
        name = self._key(key)
        with self._call():
            pipe = self._client.pipeline(transaction=True)
            pipe.incr(name)
            pipe.expire(name, window_seconds, nx=True)  # NX needs Redis 7
            count, _ = pipe.execute()
        return int(count)

    def _defer(self, names: list[str]) -> None:
        with self._lock:
            self._deferred.update(dict.fromkeys(names))
            while len(self._deferred) > MAX_DEFERRED_DELETES:
                del self._deferred[next(iter(self._deferred))]

    def _replay_deferred(self) -> None:
        """After a call that reached Redis: the deletes an outage held back."""
        with self._lock:
            names, self._deferred = list(self._deferred), {}
        if not names:
            return
        try:
            with redis_call(self._breaker):
                self._client.delete(*names)
        except DependencyUnavailable:
            self._defer(names)

    @property
    def deferred_deletes(self) -> int:
        return len(self._deferred)
