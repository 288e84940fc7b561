"""The one ``genai.Client`` of the Vertex adapters, and the translation of its errors.

``build_vertex_client`` does no I/O (the access token is fetched on the first request).
``Settings.vertex_base_url`` and ``vertex_access_token`` point the real client at a fake
endpoint in tests, so the production code path, URL shape included
(``/v1beta1/projects/P/locations/L/publishers/google/models/M``), is what the tests run.

SDK errors are translated at this edge (the mapping is ``vertex_failures``). The SDK itself
retries 408 and 5xx only: a 429 comes back to the adapter, which waits Vertex's RetryInfo
delay when the call allows it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import google.auth.exceptions as auth_errors
import httpx
from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from google.oauth2.credentials import Credentials

from shared.adapters.vertex_failures import from_api_error
from shared.config import Settings
from shared.errors import ConfigurationError, DependencyUnavailable

_SDK_RETRIES = [408, 500, 502, 503, 504]


def build_vertex_client(
    settings: Settings, retry_attempts: int = 2, timeout_ms: int = 60_000
) -> genai.Client:
    credentials = None
    if settings.vertex_access_token:
        # A static bearer token with no expiry: the SDK never tries to refresh it.
        credentials = Credentials(token=settings.vertex_access_token)  # type: ignore[no-untyped-call]
    http_options = types.HttpOptions(
        base_url=settings.vertex_base_url or None,  # "": unset over a dev env
        timeout=timeout_ms,
        retry_options=types.HttpRetryOptions(
            attempts=retry_attempts,
            initial_delay=0.25,
            max_delay=2.0,
            jitter=0.25,
            http_status_codes=_SDK_RETRIES,
        ),
    )
    return genai.Client(
        vertexai=True,
        project=settings.gcp_project,
        location=settings.vertex_location,
        credentials=credentials,
        http_options=http_options,
    )


def _transport_errors() -> tuple[type[BaseException], ...]:
    found: list[type[BaseException]] = [
        httpx.TransportError,
        auth_errors.TransportError,
        auth_errors.RefreshError,
    ]
    with suppress(ImportError):  # google-genai prefers httpx2 when it is installed
        found.append(importlib.import_module("httpx2").TransportError)
    return tuple(found)


@contextmanager
def vertex_errors(operation: str) -> Iterator[None]:
    """Translate google-genai and transport errors into the product's error tree."""
    try:
        yield
    except genai_errors.APIError as exc:
        raise from_api_error(operation, exc) from exc
    except auth_errors.DefaultCredentialsError as exc:
        raise ConfigurationError(f"{operation}: no Google credentials") from exc
    except _transport_errors() as exc:
        raise DependencyUnavailable(f"{operation}: {type(exc).__name__}: {exc}") from exc
