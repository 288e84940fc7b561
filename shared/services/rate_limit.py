"""Turns per user and minute: Redis counts them for every instance; when Redis is down,
each instance keeps its own token bucket instead of refusing or failing.

Redis keeps one counter per user and clock minute, and the limit applies to a sliding
minute: this minute's count plus last minute's, weighted by how much of last minute the
sliding window still covers. A fixed minute alone let a burst split across its boundary
pass twice the limit (CI saw 25 turns straddle one and none refused).

Failing open on the shared limiter and closed on a local one is what production rate
limiters do when their store is gone: the product keeps answering, and one instance still
cannot be flooded. The per-instance bucket holds ``per_minute`` tokens and refills at
``per_minute`` a minute, so a user spread over N instances may get up to N times the limit
while Redis is down. The fallback is logged once per incident (when it starts) and its end
once (when Redis counts again).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from shared.errors import DependencyUnavailable, RateLimited
from shared.ports import Cache, Clock

log = logging.getLogger("rate_limit")

WINDOW_SECONDS = 60
MAX_BUCKETS = 10_000  # users remembered per instance; the least recently seen go first


class TokenBucket:
    def __init__(
        self,
        per_minute: int,
        monotonic: Callable[[], float] = time.monotonic,
        max_buckets: int = MAX_BUCKETS,
    ) -> None:
        self._capacity = float(per_minute)
        self._rate = per_minute / WINDOW_SECONDS  # tokens per second
        self._now = monotonic
        self._max = max_buckets
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # tokens, at
        self._lock = threading.Lock()

    def take(self, key: str) -> bool:
        """One token for ``key`` if it has one left."""
        with self._lock:
            now = self._now()
            tokens, at = self._buckets.pop(key, (self._capacity, now))
            tokens = min(self._capacity, tokens + (now - at) * self._rate)
            allowed = tokens >= 1.0
            self._buckets[key] = (tokens - 1.0 if allowed else tokens, now)
            while len(self._buckets) > self._max:
                self._buckets.popitem(last=False)
            return allowed


class RateLimiter:
    def __init__(self, cache: Cache, clock: Clock, per_minute: int, fallback: TokenBucket) -> None:
        self._cache = cache
        self._clock = clock
        self._per_minute = per_minute
        self._fallback = fallback
        self._degraded = False
        self._lock = threading.Lock()

    @property
    def degraded(self) -> bool:
        return self._degraded

    def check(self, user_id: str) -> None:
        """Count one turn of the user; ``RateLimited`` when over the limit."""
        bucket, into = divmod(self._clock.now().timestamp(), WINDOW_SECONDS)
        try:
            count = self._cache.hit(f"rate:{user_id}:{int(bucket)}", 2 * WINDOW_SECONDS)
            before = self._cache.get(f"rate:{user_id}:{int(bucket) - 1}")
        except DependencyUnavailable:
            self._set_degraded(True)
            allowed = self._fallback.take(user_id)
        else:
            self._set_degraded(False)
            overlap = 1.0 - into / WINDOW_SECONDS  # of last minute, still inside the window
            allowed = count + int(before or 0) * overlap <= self._per_minute
        if not allowed:
            raise RateLimited("too many messages; wait a minute")

    def _set_degraded(self, degraded: bool) -> None:
        if degraded == self._degraded:
            return
        with self._lock:
            if degraded == self._degraded:
                return
            self._degraded = degraded
        if degraded:
            log.warning("redis unavailable: rate limiting falls back to a per-instance bucket")
        else:
            log.warning("redis back: rate limiting counts in redis again")
