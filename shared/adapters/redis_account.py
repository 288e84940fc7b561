"""The user's Redis keys, found and erased without touching another user's.

Convention for every per-user key (``RedisCache`` puts ``<prefix>:`` in front of what the
services pass): ``<prefix>:<kind>:<uid>[:<rest>]``, where ``<kind>`` has no colon, e.g.
``pa:rate:alice:29443021``. SCAN MATCH narrows the keyspace to ``<prefix>:*:<uid>*``; each
candidate is then kept only if its second segment after the prefix *equals* the uid, so
``u1`` never matches ``u1_2`` (nor a number in another user's key).
"""

from __future__ import annotations

import re

import redis

from shared.adapters.breaker import CircuitBreaker
from shared.adapters.redis_calls import redis_call

_GLOB_SPECIAL = re.compile(r"([*?\[\]\\])")


def _glob_escape(text: str) -> str:
    return _GLOB_SPECIAL.sub(r"\\\1", text)


def owns(prefix: str, key: str, user_id: str) -> bool:
    """Whether ``key`` is ``<prefix>:<kind>:<user_id>`` or ``<prefix>:<kind>:<user_id>:...``."""
    head = f"{prefix}:"
    if not key.startswith(head):
        return False
    segments = key[len(head) :].split(":")
    return len(segments) >= 2 and segments[1] == user_id


class RedisAccountKeys:
    def __init__(
        self,
        client: redis.Redis,
        prefix: str,
        scan_count: int = 1000,
        batch: int = 500,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        self._client = client
        self._breaker = breaker
        self._prefix = prefix
        self._scan_count = scan_count
        self._batch = batch

    def user_keys(self, user_id: str) -> list[str]:
        if not user_id:
            raise ValueError("user_id must not be empty")
        pattern = f"{_glob_escape(self._prefix)}:*:{_glob_escape(user_id)}*"
        with redis_call(self._breaker):
            found = self._client.scan_iter(match=pattern, count=self._scan_count)
            names = [key.decode() if isinstance(key, bytes) else str(key) for key in found]
        return sorted({name for name in names if owns(self._prefix, name, user_id)})

    def delete_user(self, user_id: str) -> int:
        """Unlink every key of the user; idempotent (a retry finds fewer or none)."""
        keys = self.user_keys(user_id)
        deleted = 0
        with redis_call(self._breaker):
            for start in range(0, len(keys), self._batch):
                deleted += int(self._client.unlink(*keys[start : start + self._batch]))
        return deleted
