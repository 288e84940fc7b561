"""Rate limiting: Redis counts per minute; while Redis is down a per-instance token bucket
decides, and the fallback is logged once per incident."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import pytest

from shared.errors import DependencyUnavailable, RateLimited
from shared.fakes.cache import FakeCache
from shared.fakes.clock import FixedClock
from shared.services.rate_limit import RateLimiter, TokenBucket


class Ticks:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class SwitchableCache(FakeCache):
    """A cache whose counter can be made unavailable, as Redis is during an outage."""

    def __init__(self, clock: FixedClock) -> None:
        super().__init__(clock)
        self.down = False

    def hit(self, key: str, window_seconds: int) -> int:
        if self.down:
            raise DependencyUnavailable("redis unavailable")
        return super().hit(key, window_seconds)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(datetime(2026, 5, 1, 12, 0, 5, tzinfo=UTC))


def allowed(limiter: RateLimiter, user: str, times: int) -> int:
    count = 0
    for _ in range(times):
        try:
            limiter.check(user)
            count += 1
        except RateLimited:
            pass
    return count


def test_redis_counts_the_minute(clock: FixedClock) -> None:
    limiter = RateLimiter(FakeCache(clock), clock, 3, TokenBucket(3, Ticks()))
    assert allowed(limiter, "u1", 5) == 3
    assert allowed(limiter, "u2", 1) == 1
    clock.advance(120)  # last minute's refused turns count too, while the window covers them
    assert allowed(limiter, "u1", 1) == 1


def test_a_burst_across_the_minute_boundary_is_still_limited(clock: FixedClock) -> None:
    limiter = RateLimiter(FakeCache(clock), clock, 4, TokenBucket(4, Ticks()))
    clock.advance(53)  # 12:00:58
    assert allowed(limiter, "u1", 3) == 3
    clock.advance(4)  # 12:01:02: a fixed minute would start counting from zero here
    assert allowed(limiter, "u1", 3) == 1
    clock.advance(105)  # 12:02:47: of 12:01's three turns (refused ones count), 0.65 remain
    assert allowed(limiter, "u1", 4) == 3


def test_redis_down_falls_back_to_the_bucket_which_still_limits(clock: FixedClock) -> None:
    cache, ticks = SwitchableCache(clock), Ticks()
    limiter = RateLimiter(cache, clock, 3, TokenBucket(3, ticks))
    cache.down = True
    assert allowed(limiter, "u1", 5) == 3  # answered, not failed; and still bounded
    assert limiter.degraded
    ticks.now = 20.0  # a token comes back every 20 s at 3 a minute
    assert allowed(limiter, "u1", 2) == 1
    cache.down = False
    assert allowed(limiter, "u1", 1) == 1
    assert not limiter.degraded


def test_the_fallback_is_logged_once_per_incident(
    clock: FixedClock, caplog: pytest.LogCaptureFixture
) -> None:
    cache = SwitchableCache(clock)
    limiter = RateLimiter(cache, clock, 100, TokenBucket(100, Ticks()))
    with caplog.at_level(logging.WARNING, logger="rate_limit"):
        cache.down = True
        allowed(limiter, "u1", 10)
        cache.down = False
        allowed(limiter, "u1", 10)
        cache.down = True
        allowed(limiter, "u1", 10)
    assert [r.getMessage() for r in caplog.records] == [
        "redis unavailable: rate limiting falls back to a per-instance bucket",
        "redis back: rate limiting counts in redis again",
        "redis unavailable: rate limiting falls back to a per-instance bucket",
    ]


def test_the_bucket_refills_to_its_capacity_only() -> None:
    ticks = Ticks()
    bucket = TokenBucket(2, ticks)
    assert [bucket.take("u") for _ in range(3)] == [True, True, False]
    ticks.now = 3600.0
    assert [bucket.take("u") for _ in range(3)] == [True, True, False]


def test_the_bucket_forgets_the_least_recent_users_beyond_its_size() -> None:
    bucket = TokenBucket(1, Ticks(), max_buckets=2)
    assert bucket.take("a") and bucket.take("b")
    assert bucket.take("c")  # "a" is forgotten: it starts full again
    assert bucket.take("a")
    assert not bucket.take("c")
