"""Firestore transactions under contention: retried with jittered backoff.

The client's ``@transactional`` retries an aborted transaction at once; answers racing for
one interrupt (a double tap, two devices, a message and a resume) then keep aborting each
other (on the emulator each round also waits out a lock of about 2 s). Here every attempt
is a transaction of one try, the next after a random, growing pause, so the racers fall out
of step: the first commits and the others re-read and see its claim. A loser may
also learn that it lost from a plain read, without taking locks again (``settled``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from google.api_core import exceptions as gexc
from google.cloud import firestore

from shared.adapters.gcp_errors import TRANSIENT
from shared.errors import DependencyUnavailable

T = TypeVar("T")
# Six answers racing for one interrupt on a loaded 2-core machine ran out of 12 (CI,
# 2026-11-26: four losers got 503 instead of 409); a loser that keeps trying only waits.
ATTEMPTS = 20
FIRST_PAUSE_SECONDS = 0.01
LONGEST_PAUSE_SECONDS = 1.0


def run_transaction(
    client: firestore.Client,
    work: Callable[[firestore.Transaction], T],
    attempts: int = ATTEMPTS,
    settled: Callable[[], T | None] | None = None,
) -> T:
    """``work`` is a ``@firestore.transactional`` function; it may run several times.

    ``settled``: after an abort, a plain read that may already tell the outcome without
    writing anything (a racer that lost needs no lock to learn it lost); None: try again."""
    for attempt in range(attempts):
        try:
            return work(client.transaction(max_attempts=1))
        except (gexc.Aborted, ValueError) as exc:
            _unavailable(exc)
            if not _aborted(exc):
                raise
        outcome = settled() if settled is not None else None
        if outcome is not None:
            return outcome
        pause = min(LONGEST_PAUSE_SECONDS, FIRST_PAUSE_SECONDS * 2**attempt)
        time.sleep(random.uniform(0, pause))
    raise DependencyUnavailable(f"firestore transaction aborted {attempts} times")


def _unavailable(exc: BaseException) -> None:
    """A transaction that could not even begin (Firestore down): the client then fails to
    roll back what never started, with a ValueError hiding the outage; raise the outage."""
    hidden = exc.__context__
    if isinstance(exc, ValueError) and isinstance(hidden, TRANSIENT):
        raise DependencyUnavailable(f"firestore unavailable: {type(hidden).__name__}") from hidden


def _aborted(exc: BaseException) -> bool:
    # transactional() wraps the Aborted of its last try in a ValueError.
    return isinstance(exc, gexc.Aborted) or isinstance(exc.__cause__, gexc.Aborted)
