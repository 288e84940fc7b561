"""Every Redis call of the adapters: connection failures and timeouts as
``DependencyUnavailable``, through the instance's circuit breaker when it has one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from redis import exceptions as rexc

from shared.adapters.breaker import CircuitBreaker
from shared.errors import DependencyUnavailable


@contextmanager
def redis_call(breaker: CircuitBreaker | None = None) -> Iterator[None]:
    if breaker is None:
        with _translated():
            yield
        return
    with breaker.guard(), _translated():
        yield


@contextmanager
def _translated() -> Iterator[None]:
    try:
        yield
    except (rexc.ConnectionError, rexc.TimeoutError) as exc:
        raise DependencyUnavailable(f"redis unavailable: {type(exc).__name__}") from exc
