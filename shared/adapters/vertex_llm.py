"""Gemini on Vertex AI through google-genai: the production model.

``build_vertex`` makes the model and the embedder of ``vertex_embedder`` on one client of
``vertex_client``, which also translates the SDK's errors for both.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from google import genai
from google.genai import types
from pydantic import BaseModel, ValidationError

from shared.adapters.model_guard import check_allow_model_requests
from shared.adapters.vertex_client import build_vertex_client, vertex_errors
from shared.adapters.vertex_embedder import VertexEmbedder
from shared.config import Settings
from shared.errors import ModelOutputInvalid
from shared.ports import Generation, LLMRequest, StreamChunk, Usage

if TYPE_CHECKING:
    from shared.ports import LLM, Embedder

M = TypeVar("M", bound=BaseModel)


def build_vertex(settings: Settings) -> tuple[LLM, Embedder]:
    client = build_vertex_client(settings)
    llm = VertexLLM(client, settings.vertex_model)
    embedder = VertexEmbedder(client, settings.vertex_embedding_model, settings.embedding_dimension)
    return llm, embedder


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
            labels=dict(request.labels) or None,
            **extra,
        )
