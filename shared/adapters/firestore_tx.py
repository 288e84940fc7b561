"""Firestore transactions under contention: retried with jittered backoff.

The client's ``@transactional`` retries an aborted transaction at once; answers racing for
one interrupt (a double tap, two devices) then keep aborting each other. Here every attempt
is a transaction of one try, and the next waits a random, growing pause, so the racers
fall out of step: the first commits and the others re-read and see its claim.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from google.api_core import exceptions as gexc
from google.cloud import firestore

from shared.errors import DependencyUnavailable

T = TypeVar("T")
ATTEMPTS = 12
FIRST_PAUSE_SECONDS = 0.01
LONGEST_PAUSE_SECONDS = 0.5


def run_transaction(
    client: firestore.Client, work: Callable[[firestore.Transaction], T], attempts: int = ATTEMPTS
) -> T:
    """``work`` is a ``@firestore.transactional`` function; it may run several times."""
    for attempt in range(attempts):
        try:
            return work(client.transaction(max_attempts=1))
        except (gexc.Aborted, ValueError) as exc:
            if not _aborted(exc):
                raise
        pause = min(LONGEST_PAUSE_SECONDS, FIRST_PAUSE_SECONDS * 2**attempt)
        time.sleep(random.uniform(0, pause))
    raise DependencyUnavailable(f"firestore transaction aborted {attempts} times")


def _aborted(exc: BaseException) -> bool:
    # transactional() wraps the Aborted of its last try in a ValueError.
    return isinstance(exc, gexc.Aborted) or isinstance(exc.__cause__, gexc.Aborted)
