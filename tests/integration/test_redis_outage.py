"""The Redis adapter during an outage of a real redis-server (paused by pid, then resumed):
the breaker turns timeouts into immediate refusals, and a delete that failed is done once
Redis answers again."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import redis

from shared.adapters.breaker import CircuitBreaker
from shared.adapters.redis_cache import RedisCache
from shared.errors import DependencyUnavailable
from testkit.faults import PrivateRedis, wait_until

TIMEOUT = 0.3


@pytest.fixture
def server() -> Iterator[PrivateRedis]:
    with PrivateRedis() as private:
        yield private


def cache_on(server: PrivateRedis, breaker: CircuitBreaker) -> RedisCache:
    client = redis.Redis.from_url(
        server.url, socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT
    )
    return RedisCache(client, "t", breaker)


def refused_in(cache: RedisCache) -> float:
    started = time.monotonic()
    with pytest.raises(DependencyUnavailable):
        cache.get("k")
    return time.monotonic() - started


def test_a_paused_redis_costs_the_timeout_only_until_the_breaker_opens(
    server: PrivateRedis,
) -> None:
    breaker = CircuitBreaker("redis", failures=2, reset_seconds=60)
    cache = cache_on(server, breaker)
    cache.set("k", b"v", 60)
    server.pause()
    try:
        first = [refused_in(cache) for _ in range(2)]
        assert breaker.state == "open"
        fast = [refused_in(cache) for _ in range(20)]
    finally:
        server.resume()
    assert min(first) >= TIMEOUT * 0.9  # each paid the socket timeout
    assert sum(fast) < min(first)  # twenty refusals together cost less than one timeout


def test_a_delete_during_the_outage_happens_once_redis_is_back(server: PrivateRedis) -> None:
    breaker = CircuitBreaker("redis", failures=1, reset_seconds=0.2)
    cache = cache_on(server, breaker)
    cache.set("ctx:u1", b"old context", 3600)
    server.pause()
    try:
        with pytest.raises(DependencyUnavailable):
            cache.delete("ctx:u1")
        assert cache.deferred_deletes == 1
    finally:
        server.resume()

    def answers() -> bool:
        try:
            cache.set("other", b"x", 60)  # any call that reaches Redis
        except DependencyUnavailable:
            return False
        return True

    assert wait_until(answers, 30)
    assert breaker.state == "closed"
    assert cache.get("ctx:u1") is None
    assert cache.deferred_deletes == 0
