"""The circuit breaker: open after N failures, fail fast, one probe, close on success."""

from __future__ import annotations

import logging
import threading

import pytest

from shared.adapters.breaker import CircuitBreaker
from shared.errors import DependencyUnavailable


class Ticks:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def fail(breaker: CircuitBreaker) -> None:
    with pytest.raises(DependencyUnavailable), breaker.guard():
        raise DependencyUnavailable("down")


def succeed(breaker: CircuitBreaker) -> str:
    with breaker.guard():
        return "ok"


def test_opens_after_consecutive_failures_and_then_fails_fast() -> None:
    ticks = Ticks()
    breaker = CircuitBreaker("redis", failures=3, reset_seconds=2.0, monotonic=ticks)
    fail(breaker)
    fail(breaker)
    assert breaker.state == "closed"
    fail(breaker)
    assert breaker.state == "open"
    ran = []
    with pytest.raises(DependencyUnavailable, match="circuit open"), breaker.guard():
        ran.append("called")  # never: the breaker refuses before the call
    assert ran == []


def test_a_success_resets_the_count() -> None:
    breaker = CircuitBreaker("redis", failures=2, monotonic=Ticks())
    fail(breaker)
    assert succeed(breaker) == "ok"
    fail(breaker)
    assert breaker.state == "closed"


def test_one_probe_after_the_reset_time_closes_it() -> None:
    ticks = Ticks()
    breaker = CircuitBreaker("redis", failures=1, reset_seconds=2.0, monotonic=ticks)
    fail(breaker)
    ticks.now = 1.9
    assert breaker.state == "open"
    ticks.now = 2.0
    assert breaker.state == "half_open"
    assert succeed(breaker) == "ok"
    assert breaker.state == "closed"


def test_a_failed_probe_opens_it_again_for_a_full_reset_time() -> None:
    ticks = Ticks()
    breaker = CircuitBreaker("redis", failures=1, reset_seconds=2.0, monotonic=ticks)
    fail(breaker)
    ticks.now = 2.5
    fail(breaker)  # the probe
    ticks.now = 4.0
    assert breaker.state == "open"
    ticks.now = 4.5
    assert breaker.state == "half_open"


def test_only_one_probe_runs_while_the_others_fail_fast() -> None:
    ticks = Ticks()
    breaker = CircuitBreaker("redis", failures=1, reset_seconds=1.0, monotonic=ticks)
    fail(breaker)
    ticks.now = 1.0
    inside, release = threading.Event(), threading.Event()

    def probe() -> None:
        with breaker.guard():
            inside.set()
            release.wait(5)

    thread = threading.Thread(target=probe)
    thread.start()
    assert inside.wait(5)
    with pytest.raises(DependencyUnavailable), breaker.guard():
        pass
    release.set()
    thread.join(5)
    assert breaker.state == "closed"


def test_an_error_that_is_not_about_availability_counts_as_an_answer() -> None:
    breaker = CircuitBreaker("redis", failures=1, monotonic=Ticks())
    with pytest.raises(TypeError), breaker.guard():
        raise TypeError("a bug, not an outage")
    assert breaker.state == "closed"


def test_each_incident_is_logged_once_when_it_opens_and_once_when_it_closes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ticks = Ticks()
    breaker = CircuitBreaker("redis", failures=1, reset_seconds=1.0, monotonic=ticks)
    with caplog.at_level(logging.WARNING, logger="breaker"):
        fail(breaker)
        for _ in range(5):
            with pytest.raises(DependencyUnavailable), breaker.guard():
                pass
        ticks.now = 1.0
        fail(breaker)  # a failed probe: still the same incident
        ticks.now = 2.5
        succeed(breaker)
        succeed(breaker)
    messages = [record.getMessage() for record in caplog.records]
    assert messages == [
        "dependency unavailable: circuit open",
        "dependency back: circuit closed",
    ]
    assert caplog.records[1].__dict__["down_seconds"] == 2.5


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError):
        CircuitBreaker("x", failures=0)
    with pytest.raises(ValueError):
        CircuitBreaker("x", reset_seconds=0)
