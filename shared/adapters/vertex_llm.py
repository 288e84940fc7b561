"""Gemini on Vertex AI through google-genai: the production model.

``build_vertex_client`` makes the one ``genai.Client`` an instance needs; it does no I/O (the
access token is fetched on the first request). ``Settings.vertex_base_url`` and
``vertex_access_token`` point the real client at a fake endpoint in tests, so the production
code path, URL shape included (``/v1beta1/projects/P/locations/L/publishers/google/models/M``),
is what the tests run.

SDK errors are translated at this edge: throttling, 5xx and transport failures become
``DependencyUnavailable`` (a queue should retry), rejected credentials ``ConfigurationError``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any, TypeVar

import google.auth.exceptions as auth_errors
import httpx
from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from google.oauth2.credentials import Credentials
from pydantic import BaseModel, ValidationError

from shared.adapters.model_guard import check_allow_model_requests
from shared.config import Settings
from shared.errors import ConfigurationError, DependencyUnavailable, ModelOutputInvalid
from shared.ports import Generation, LLMRequest, StreamChunk, Usage

if TYPE_CHECKING:
    from shared.ports import LLM, Embedder

M = TypeVar("M", bound=BaseModel)

_TRANSIENT_STATUS = {408, 429}
_AUTH_STATUS = {401, 403}


def build_vertex_client(
    settings: Settings, retry_attempts: int = 2, timeout_ms: int = 60_000
) -> genai.Client:
    credentials = None
    if settings.vertex_access_token:
        # A static bearer token with no expiry: the SDK never tries to refresh it.
        credentials = Credentials(token=settings.vertex_access_token)  # type: ignore[no-untyped-call]
    http_options = types.HttpOptions(
        base_url=settings.vertex_base_url,
        timeout=timeout_ms,
        retry_options=types.HttpRetryOptions(
            attempts=retry_attempts, initial_delay=0.25, max_delay=2.0, jitter=0.25
        ),
    )
    return genai.Client(
        vertexai=True,
        project=settings.gcp_project,
        location=settings.vertex_location,
        credentials=credentials,
        http_options=http_options,
    )


def build_vertex(settings: Settings) -> tuple[LLM, Embedder]:
    # Imported here: vertex_embedder imports this module for its error translation.
    from shared.adapters.vertex_embedder import VertexEmbedder

    client = build_vertex_client(settings)
    llm = VertexLLM(client, settings.vertex_model)
    embedder = VertexEmbedder(client, settings.vertex_embedding_model, settings.embedding_dimension)
    return llm, embedder


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
        message = f"{operation}: Vertex AI answered {exc.code} {exc.status or ''}".strip()
        if exc.code in _AUTH_STATUS:
            raise ConfigurationError(message) from exc
        if exc.code in _TRANSIENT_STATUS or exc.code >= 500:
            raise DependencyUnavailable(message) from exc
        raise  # any other 4xx is a bug in the request we built: keep its full detail
    except auth_errors.DefaultCredentialsError as exc:
        raise ConfigurationError(f"{operation}: no Google credentials") from exc
    except _transport_errors() as exc:
        raise DependencyUnavailable(f"{operation}: {type(exc).__name__}: {exc}") from exc


def _contents(request: LLMRequest) -> list[types.Content]:
    return [
        types.Content(
            role="model" if turn.role == "assistant" else "user",
            parts=[types.Part(text=turn.text)],
        )
        for turn in request.messages
    ]


def _text(response: types.GenerateContentResponse) -> str:
    """The answer's text parts, without thoughts (``response.text`` logs on other parts)."""
    if not response.candidates or response.candidates[0].content is None:
        return ""
    parts = response.candidates[0].content.parts or []
    return "".join(part.text for part in parts if part.text and not part.thought)


def _usage(metadata: types.GenerateContentResponseUsageMetadata | None) -> Usage:
    if metadata is None:
        return Usage()
    # Thinking tokens are billed as output.
    output = (metadata.candidates_token_count or 0) + (metadata.thoughts_token_count or 0)
    return Usage(input_tokens=metadata.prompt_token_count or 0, output_tokens=output)


def _describe_empty(response: types.GenerateContentResponse) -> str:
    feedback = response.prompt_feedback
    if feedback is not None and feedback.block_reason is not None:
        return f"prompt blocked ({feedback.block_reason})"
    if response.candidates:
        return f"no text (finish reason {response.candidates[0].finish_reason})"
    return "no candidates"


class VertexLLM:
    def __init__(self, client: genai.Client, model: str, thinking_budget: int | None = 0) -> None:
        """``thinking_budget=0`` turns thinking off: thought tokens count against
        ``max_output_tokens`` and could leave a short reply empty. ``None`` keeps the default."""
        self._client = client
        self._model = model
        self._thinking_budget = thinking_budget
        self.name = f"vertex:{model}"

    def generate(self, request: LLMRequest) -> Generation:
        response = self._call(request, self._config(request))
        text = _text(response)
        if not text:
            raise ModelOutputInvalid(f"{self.name}: {_describe_empty(response)}")
        return Generation(text=text, usage=_usage(response.usage_metadata))

    def stream(self, request: LLMRequest) -> Iterator[StreamChunk]:
        check_allow_model_requests(self.name)
        usage = Usage()
        with vertex_errors(f"{self.name} stream"):
            responses = self._client.models.generate_content_stream(
                model=self._model, contents=_contents(request), config=self._config(request)
            )
            for response in responses:
                text = _text(response)
                if text:
                    yield StreamChunk(text=text)
                if response.usage_metadata is not None:
                    usage = _usage(response.usage_metadata)  # cumulative: the last one counts
        yield StreamChunk(usage=usage)

    def structured(self, request: LLMRequest, schema: type[M]) -> tuple[M, Usage]:
        config = self._config(request)
        config.response_mime_type = "application/json"
        config.response_json_schema = schema.model_json_schema()
        response = self._call(request, config)
        text = _text(response)
        try:
            value = schema.model_validate_json(text)
        except ValidationError as exc:
            raise ModelOutputInvalid(
                f"{self.name}: output does not match {schema.__name__}"
                + ("" if text else f" ({_describe_empty(response)})")
            ) from exc
        return value, _usage(response.usage_metadata)

    def _call(
        self, request: LLMRequest, config: types.GenerateContentConfig
    ) -> types.GenerateContentResponse:
        check_allow_model_requests(self.name)
        with vertex_errors(f"{self.name} generate"):
            return self._client.models.generate_content(
                model=self._model, contents=_contents(request), config=config
            )

    def _config(self, request: LLMRequest) -> types.GenerateContentConfig:
        extra: dict[str, Any] = {}
        if self._thinking_budget is not None:
            extra["thinking_config"] = types.ThinkingConfig(thinking_budget=self._thinking_budget)
        return types.GenerateContentConfig(
            system_instruction=request.system or None,
            max_output_tokens=request.max_output_tokens,
            temperature=request.temperature,
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            **extra,
        )
