"""Which Google API failures are transient, and their mapping to ``DependencyUnavailable``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from google.api_core import exceptions as gexc
from google.auth import exceptions as auth_exc

from shared.errors import DependencyUnavailable

# Worth a retry by the caller (or its queue); anything else is a bug or a misconfiguration.
TRANSIENT: tuple[type[BaseException], ...] = (
    gexc.ServiceUnavailable,
    gexc.DeadlineExceeded,
    gexc.InternalServerError,
    gexc.Aborted,
    gexc.ResourceExhausted,
    gexc.RetryError,
    auth_exc.TransportError,
    TimeoutError,
)


@contextmanager
def transient_as_unavailable(service: str) -> Iterator[None]:
    try:
        yield
    except TRANSIENT as exc:
        raise DependencyUnavailable(f"{service} unavailable: {type(exc).__name__}") from exc


@contextmanager
def firestore_errors() -> Iterator[None]:
    """Firestore's transient failures, and a transaction that kept aborting, as
    ``DependencyUnavailable``."""
    try:
        with transient_as_unavailable("firestore"):
            yield
    except ValueError as exc:
        # transactional() wraps the last Aborted of its retries in a ValueError.
        if isinstance(exc.__cause__, gexc.Aborted):
            raise DependencyUnavailable("firestore transaction kept aborting") from exc
        raise
