"""Gemini on Vertex AI through google-genai: the production model.

``build_vertex`` makes the model and the embedder of ``vertex_embedder`` on one client of
``vertex_client``. Each request names its kind of work (``LLMRequest.kind``), which picks
the configured model and its thinking control (``shared.model_catalog``). Failures are
mapped in ``vertex_failures``; schemas are made ones Gemini honors in ``vertex_schema``.
"""

from __future__ import annotations

import itertools
import json
import logging
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeVar, get_args

from google import genai
from google.genai import types
from pydantic import BaseModel, ValidationError

from shared.adapters.model_guard import check_allow_model_requests
from shared.adapters.vertex_client import build_vertex_client, vertex_errors
from shared.adapters.vertex_embedder import VertexEmbedder
from shared.adapters.vertex_failures import without_text
from shared.adapters.vertex_schema import fit, for_gemini, inline_refs
from shared.config import Settings
from shared.errors import ModelOutputInvalid, ModelThrottled
from shared.model_catalog import ModelKind, thinking_fields
from shared.ports import ChatTurn, Generation, LLMRequest, StreamChunk, Usage

if TYPE_CHECKING:
    from shared.ports import LLM, Embedder

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


def build_vertex(settings: Settings) -> tuple[LLM, Embedder]:
    client = build_vertex_client(settings)
    llm = VertexLLM(client, settings.models())
    embedder = VertexEmbedder(client, settings.vertex_embedding_model, settings.embedding_dimension)
    return llm, embedder


_SAMPLE_RESPONSE: dict[str, object] = {  # one streamed chunk as Vertex answers it
    "candidates": [
        {"content": {"role": "model", "parts": [{"text": "-"}]}, "finishReason": "STOP"}
    ],
    "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
    "modelVersion": "-",
}


def contents(request: LLMRequest) -> list[types.Content]:
    """The conversation as Vertex takes it: a blank turn is left out (Vertex refuses an
    empty text part with 400, and an old chat may hold one)."""
    return [
        types.Content(
            role="model" if turn.role == "assistant" else "user",
            parts=[types.Part(text=turn.text)],
        )
        for turn in request.messages
        if turn.text.strip()
    ]


def answer_text(response: types.GenerateContentResponse) -> str:
    """The answer's text parts, without thoughts (``response.text`` logs on other parts)."""
    if not response.candidates or response.candidates[0].content is None:
        return ""
    parts = response.candidates[0].content.parts or []
    return "".join(part.text for part in parts if part.text and not part.thought)


def usage_of(metadata: types.GenerateContentResponseUsageMetadata | None) -> Usage:
    if metadata is None:
        return Usage()
    thoughts = metadata.thoughts_token_count or 0  # billed as output tokens
    return Usage(
        input_tokens=metadata.prompt_token_count or 0,
        output_tokens=(metadata.candidates_token_count or 0) + thoughts,
        thought_tokens=thoughts,
    )


class VertexLLM:
    def __init__(
        self,
        client: genai.Client,
        models: dict[ModelKind, str] | str,
        max_wait_seconds: float = 4.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """``models``: the model of each kind of work (one id: every kind). A 429 whose
        retry delay is at most ``max_wait_seconds`` is waited out once, within the call."""
        self._client = client
        self._models = models if isinstance(models, dict) else {}
        self._default = models["reply"] if isinstance(models, dict) else models
        self._max_wait = max_wait_seconds
        self._sleep = sleep
        self.name = f"vertex:{self._default}"

    def prepare(self) -> None:
        """Build the request and response types a call goes through, once, with no request
        sent: pydantic completes genai's models on their first use (about 50 ms on a warm
        machine), which a new instance would otherwise add to its first user's turn."""
        sample = LLMRequest(system="-", messages=[ChatTurn(role="user", text="-")])
        for kind in get_args(ModelKind):
            config = self._config(sample.model_copy(update={"kind": kind}))
        config.response_mime_type = "application/json"
        config.response_json_schema = {"type": "object"}
        try:  # genai's own private steps: if they change, the first call pays again
            types._GenerateContentParameters(model="-", contents=contents(sample), config=config)
            response = types.GenerateContentResponse._from_response(
                response=_SAMPLE_RESPONSE, kwargs={}
            )
        except Exception:
            logging.getLogger("warmup").warning("genai's types were not built", exc_info=True)
            return
        answer_text(response)
        usage_of(response.usage_metadata)

    def model_for(self, kind: ModelKind) -> str:
        return self._models.get(kind, self._default)

    def generate(self, request: LLMRequest) -> Generation:
        response = self._call(request, self._config(request))
        text = answer_text(response)
        if not text:
            raise without_text(self._label(request), response)
        return Generation(text=text, usage=usage_of(response.usage_metadata))

    def stream(self, request: LLMRequest) -> Iterator[StreamChunk]:
        check_allow_model_requests(self.name)
        model, label = self.model_for(request.kind), self._label(request)
        usage, last, said = Usage(), None, False

        def start() -> Iterator[types.GenerateContentResponse]:
            # The request goes out on the first next(): a 429 is raised there.
            responses = self._client.models.generate_content_stream(
                model=model, contents=contents(request), config=self._config(request)
            )
            first = next(responses, None)
            return itertools.chain([] if first is None else [first], responses)

        operation = f"{label} stream"
        responses = self._waiting_out_throttling(start, operation)
        with vertex_errors(operation):
            for response in responses:
                last, text = response, answer_text(response)
                if text:
                    said = True
                    yield StreamChunk(text=text)
                if response.usage_metadata is not None:
                    usage = usage_of(response.usage_metadata)  # cumulative: the last counts
        if not said:
            raise without_text(label, last)
        yield StreamChunk(usage=usage)

    def structured(self, request: LLMRequest, schema: type[M]) -> tuple[M, Usage]:
        config = self._config(request)
        config.response_mime_type = "application/json"
        own = schema.model_json_schema()
        config.response_json_schema = for_gemini(own)
        response = self._call(request, config)
        text = answer_text(response)
        if not text:
            raise without_text(self._label(request), response)
        return parse_answer(schema, text, own, self._label(request)), usage_of(
            response.usage_metadata
        )

    def _call(
        self, request: LLMRequest, config: types.GenerateContentConfig
    ) -> types.GenerateContentResponse:
        check_allow_model_requests(self.name)
        model = self.model_for(request.kind)
        return self._waiting_out_throttling(
            lambda: self._client.models.generate_content(
                model=model, contents=contents(request), config=config
            ),
            f"{self._label(request)} generate",
        )

    def _waiting_out_throttling(self, call: Callable[[], T], operation: str) -> T:
        """One wait for Vertex's RetryInfo delay when it fits in ``max_wait_seconds``."""
        try:
            with vertex_errors(operation):
                return call()
        except ModelThrottled as throttled:
            delay = throttled.retry_after
            if delay is None or delay > self._max_wait:
                raise
            self._sleep(float(delay))
        with vertex_errors(operation):
            return call()

    def _label(self, request: LLMRequest) -> str:
        return f"vertex:{self.model_for(request.kind)}"

    def _config(self, request: LLMRequest) -> types.GenerateContentConfig:
        thinking = thinking_fields(self.model_for(request.kind), request.kind)
        return types.GenerateContentConfig(
            system_instruction=request.system or None,
            max_output_tokens=request.max_output_tokens,
            temperature=request.temperature,
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            labels=dict(request.labels) or None,
            thinking_config=types.ThinkingConfig(**thinking) if thinking else None,
        )


def parse_answer(schema: type[M], text: str, own: dict[str, object], label: str) -> M:
    """The structured answer, over-long strings trimmed where safe (``vertex_schema.fit``);
    anything else that breaks the schema is ``ModelOutputInvalid`` (retried once upstream)."""
    try:
        value = fit(json.loads(text), inline_refs(own))
        return schema.model_validate(value)
    except (ValueError, ValidationError) as exc:  # JSONDecodeError is a ValueError
        raise ModelOutputInvalid(f"{label}: output does not match {schema.__name__}") from exc
