"""A process-wide switch that blocks real model calls (like pydantic-ai's ``ALLOW_MODEL_REQUESTS``).

The Vertex and local adapters call ``check_allow_model_requests()`` before any request or model
load. The test suite sets ``ALLOW_MODEL_REQUESTS = False`` once, so a test that forgot to inject
the scripted model fails loudly instead of calling Vertex or loading weights; tests that mean to
exercise a real adapter wrap themselves in ``override_allow_model_requests(True)``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from shared.errors import ConfigurationError

ALLOW_MODEL_REQUESTS = True


class ModelRequestsBlocked(ConfigurationError):
    code = "model_requests_blocked"


def check_allow_model_requests(adapter: str) -> None:
    if not ALLOW_MODEL_REQUESTS:
        raise ModelRequestsBlocked(
            f"{adapter}: real model requests are disabled (model_guard.ALLOW_MODEL_REQUESTS)"
        )


@contextmanager
def override_allow_model_requests(allow: bool) -> Iterator[None]:
    global ALLOW_MODEL_REQUESTS  # noqa: PLW0603 - the switch is module state by design
    previous = ALLOW_MODEL_REQUESTS
    ALLOW_MODEL_REQUESTS = allow
    try:
        yield
    finally:
        ALLOW_MODEL_REQUESTS = previous
