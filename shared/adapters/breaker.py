"""A circuit breaker per dependency, so an outage costs one timeout per incident, not one
per request.

Closed: calls pass; ``failures`` consecutive ``DependencyUnavailable`` open it. Open: calls
fail at once with ``DependencyUnavailable`` for ``reset_seconds``. Then one call (the
probe, half-open) is let through while the others still fail at once: its success closes
the breaker, its failure opens it again. Any other outcome (a value, or an error that is
not about availability) counts as the dependency answering.

Each incident is logged twice: when the breaker opens and when it closes again, with how
long the dependency was down. One breaker per dependency and instance (``Deps`` builds it);
it is thread safe (gunicorn serves requests on threads).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Literal

from shared.errors import DependencyUnavailable

log = logging.getLogger("breaker")

State = Literal["closed", "open", "half_open"]


class CircuitBreaker:
    def __init__(
        self,
        name: str,
        failures: int = 3,
        reset_seconds: float = 2.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if failures < 1 or reset_seconds <= 0:
            raise ValueError("failures must be >= 1 and reset_seconds > 0")
        self.name = name
        self._threshold = failures
        self._reset = reset_seconds
        self._now = monotonic
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: float | None = None  # set while open or half-open
        self._down_since: float | None = None  # the incident's first open
        self._probing = False

    @property
    def state(self) -> State:
        with self._lock:
            if self._opened_at is None:
                return "closed"
            return "half_open" if self._probing or self._probe_due() else "open"

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Run the block through the breaker (it raises ``DependencyUnavailable`` when open)."""
        probe = self._admit()
        try:
            yield
        except DependencyUnavailable:
            self._record(ok=False, probe=probe)
            raise
        except BaseException:
            self._record(ok=True, probe=probe)
            raise
        self._record(ok=True, probe=probe)

    def _probe_due(self) -> bool:
        return self._opened_at is not None and self._now() - self._opened_at >= self._reset

    def _admit(self) -> bool:
        """True when this call is the half-open probe; raises while the breaker is open."""
        with self._lock:
            if self._opened_at is None:
                return False
            if not self._probing and self._probe_due():
                self._probing = True
                return True
        raise DependencyUnavailable(f"{self.name} unavailable (circuit open)")

    def _record(self, ok: bool, probe: bool) -> None:
        with self._lock:
            if probe:
                self._probing = False
            if ok:
                self._close()
                return
            self._failures += 1
            if probe or (self._opened_at is None and self._failures >= self._threshold):
                self._open()

    def _open(self) -> None:
        first = self._opened_at is None
        self._opened_at = self._now()
        if first:
            self._down_since = self._opened_at
            log.warning(
                "dependency unavailable: circuit open",
                extra={"dependency": self.name, "failures": self._failures},
            )

    def _close(self) -> None:
        self._failures = 0
        if self._opened_at is None:
            return
        since = self._opened_at if self._down_since is None else self._down_since
        down = self._now() - since
        self._opened_at = self._down_since = None
        log.warning(
            "dependency back: circuit closed",
            extra={"dependency": self.name, "down_seconds": round(down, 2)},
        )
