"""``Cache`` on Redis (redis-py, client injected), every key under ``{prefix}:``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import redis
from redis import exceptions as rexc

from shared.errors import DependencyUnavailable


@contextmanager
def _redis_errors() -> Iterator[None]:
    try:
        yield
    except (rexc.ConnectionError, rexc.TimeoutError) as exc:
        raise DependencyUnavailable(f"redis unavailable: {type(exc).__name__}") from exc


class RedisCache:
    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self._client = client
        self._prefix = prefix

    def _key(self, key: str) -> str:
        return f"{self._prefix}:{key}"

    def get(self, key: str) -> bytes | None:
        with _redis_errors():
            value = self._client.get(self._key(key))
        if value is None or isinstance(value, bytes):
            return value
        raise TypeError("RedisCache needs a client built with decode_responses=False")

    def set(self, key: str, value: bytes, ttl_seconds: int) -> None:
        if ttl_seconds <= 0:
            raise ValueError("ttl_seconds must be positive")
        with _redis_errors():
            self._client.set(self._key(key), value, ex=ttl_seconds)

    def delete(self, *keys: str) -> None:
        if not keys:
            return
        with _redis_errors():
            self._client.delete(*(self._key(k) for k in keys))

    def hit(self, key: str, window_seconds: int) -> int:
        """Fixed window: the first hit starts the key's expiry, later hits leave it alone."""
        if window_seconds <= 0:
            raise ValueError("window_seconds must be positive")
        name = self._key(key)
        with _redis_errors():
            pipe = self._client.pipeline(transaction=True)
            pipe.incr(name)
            pipe.expire(name, window_seconds, nx=True)  # NX needs Redis 7
            count, _ = pipe.execute()
        return int(count)
