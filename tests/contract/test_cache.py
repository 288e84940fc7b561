"""Cache contract: the fake and Redis behave the same (time moves by clock or by sleeping)."""

from __future__ import annotations

from tests.contract.conftest import CacheBackend


def test_get_missing_is_none(cache_backend: CacheBackend) -> None:
    assert cache_backend.cache.get("missing") is None


def test_set_then_get(cache_backend: CacheBackend) -> None:
    cache = cache_backend.cache
    cache.set("k", b"\x00binary\xff", 60)
    assert cache.get("k") == b"\x00binary\xff"
    cache.set("k", b"replaced", 60)
    assert cache.get("k") == b"replaced"


def test_value_expires_after_its_ttl(cache_backend: CacheBackend) -> None:
    cache = cache_backend.cache
    cache.set("short", b"v", 1)
    cache.set("long", b"v", 60)
    cache_backend.advance(1.2)
    assert cache.get("short") is None
    assert cache.get("long") == b"v"


def test_delete_many_and_missing(cache_backend: CacheBackend) -> None:
    cache = cache_backend.cache
    cache.set("a", b"1", 60)
    cache.set("b", b"2", 60)
    cache.set("c", b"3", 60)
    cache.delete("a", "b", "never-set")
    cache.delete()
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (None, None, b"3")


def test_hit_counts_within_a_fixed_window(cache_backend: CacheBackend) -> None:
    cache = cache_backend.cache
    assert [cache.hit("rate:u1", 1) for _ in range(3)] == [1, 2, 3]
    assert cache.hit("rate:u2", 1) == 1  # counters are per key
    cache_backend.advance(1.2)
    assert cache.hit("rate:u1", 1) == 1  # a new window


def test_hit_does_not_extend_the_window(cache_backend: CacheBackend) -> None:
    cache = cache_backend.cache
    assert cache.hit("rate:w", 2) == 1
    cache_backend.advance(1.2)
    assert cache.hit("rate:w", 2) == 2  # same window; this hit must not push its end
    cache_backend.advance(1.0)
    assert cache.hit("rate:w", 2) == 1
