"""The Vertex AI REST bodies the service reads and writes.

Only the subset that google-genai sends in Vertex mode for the product's adapters is
understood: text parts, a system instruction, ``generationConfig`` (max tokens, sampling,
stop sequences, JSON output with ``responseJsonSchema``), one or several texts to embed.
Anything that would change what is asked (tools, cached content, an OpenAPI
``responseSchema``, several candidates, non-text parts) is refused with 400, as Vertex
refuses what it does not support, rather than silently ignored. Settings that only tune
Gemini (thinking, safety) are ignored once ``vertex_rules`` found nothing Vertex refuses;
of the request labels (billing, on Vertex), ``priority: background`` puts the call behind
interactive ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from scripts.model_service import vertex_rules
from scripts.model_service.calls import ChatCall, Json, Outcome, Role

PATH = re.compile(
    r"^/v1(?:beta1)?/projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)"
    r"/publishers/google/models/(?P<model>[^/:]+):(?P<rpc>[A-Za-z]+)$"
)
STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    404: "NOT_FOUND",
    405: "INVALID_ARGUMENT",
    411: "INVALID_ARGUMENT",
    413: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}
FINISH_REASONS = {"stop": "STOP", "length": "MAX_TOKENS", "deadline": "OTHER", "cancelled": "OTHER"}
MAX_BATCH = 250  # texts per batchEmbedContents, as on Vertex
M = TypeVar("M", bound=BaseModel)


class WireError(Exception):
    """A request the service answers with an error status (Vertex's error body)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    def body(self) -> Json:
        status_name = STATUS_NAMES.get(self.status, "UNKNOWN")
        return {"error": {"code": self.status, "message": self.message, "status": status_name}}


class _Body(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, extra="ignore", frozen=True)


class _Part(_Body):
    model_config = ConfigDict(alias_generator=to_camel, extra="forbid", frozen=True)
    text: str


class _Content(_Body):
    role: Literal["user", "model"] = "user"
    parts: list[_Part] = Field(min_length=1)

    def text(self) -> str:
        return "".join(part.text for part in self.parts)


class _System(_Body):
    parts: list[_Part] = Field(min_length=1)


class _GenerationConfig(_Body):
    max_output_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    top_k: int | None = Field(default=None, ge=1)
    stop_sequences: list[str] = Field(default_factory=list, max_length=5)
    seed: int | None = None
    candidate_count: Literal[1] | None = None
    response_mime_type: Literal["text/plain", "application/json"] | None = None
    response_json_schema: dict[str, Any] | None = None
    response_schema: None = None  # the OpenAPI dialect: not supported here


class GenerateRequest(_Body):
    contents: list[_Content] = Field(min_length=1)
    system_instruction: _System | None = None
    generation_config: _GenerationConfig = _GenerationConfig()
    tools: None = None
    tool_config: None = None
    cached_content: None = None
    labels: dict[str, str] = Field(default_factory=dict, max_length=64)

    @property
    def background(self) -> bool:
        return self.labels.get("priority") == "background"


class _EmbedConfig(_Body):
    output_dimensionality: int | None = Field(default=None, ge=1)


class EmbedRequest(_Body):
    content: _Content
    embed_content_config: _EmbedConfig = _EmbedConfig()


class BatchEmbedRequest(_Body):
    requests: list[EmbedRequest] = Field(min_length=1, max_length=MAX_BATCH)


class _Instance(_Body):
    content: str


class _PredictParameters(_Body):
    output_dimensionality: int | None = Field(default=None, ge=1)


class PredictRequest(_Body):
    """The embedding API of Vertex's non-Gemini text embedding models; google-genai uses it
    for every model whose name does not say ``gemini``."""

    instances: list[_Instance] = Field(min_length=1, max_length=MAX_BATCH)
    parameters: _PredictParameters = _PredictParameters()


@dataclass(frozen=True)
class Route:
    model: str
    rpc: str


def route(path: str) -> Route:
    match = PATH.match(path)
    if match is None:
        raise WireError(404, f"no such resource: {path}")
    return Route(model=match["model"], rpc=match["rpc"])


def parse(schema: type[M], body: object) -> M:
    try:
        return schema.model_validate(body)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'body'}: {error['msg']}"
            for error in exc.errors(include_url=False)[:5]
        )
        raise WireError(400, f"invalid {schema.__name__}: {problems}") from exc


def chat_call(
    request: GenerateRequest, max_output_tokens: int, gemini_like: bool = False
) -> ChatCall:
    """The engine's call for a generateContent body; max tokens clamped to the service's cap.
    Gemini-like: the schema's pattern and length keywords are dropped (Gemini ignores them)."""
    config = request.generation_config
    wants_json = config.response_mime_type == "application/json"
    if config.response_json_schema is not None and not wants_json:
        raise WireError(400, "responseJsonSchema needs responseMimeType application/json")
    roles: dict[str, Role] = {"user": "user", "model": "assistant"}
    system = request.system_instruction
    return ChatCall(
        system="\n".join(part.text for part in system.parts) if system else "",
        messages=tuple((roles[c.role], c.text()) for c in request.contents),
        max_tokens=min(config.max_output_tokens or max_output_tokens, max_output_tokens),
        temperature=config.temperature,
        top_p=config.top_p,
        top_k=config.top_k,
        stop=tuple(config.stop_sequences),
        seed=config.seed,
        schema=(
            vertex_rules.gemini_enforced(config.response_json_schema)
            if gemini_like
            else config.response_json_schema
        ),
        json_mode=wants_json and config.response_json_schema is None,
    )


EMBEDDING_RPCS = ("embedContent", "batchEmbedContents", "predict")


def embed_texts(rpc: str, body: object, dimension: int, model: str) -> list[str]:
    """The texts of any of the three embedding calls, once the dimension asked is checked."""
    asked: list[int | None]
    if rpc == "predict":
        predict = parse(PredictRequest, body)
        texts = [instance.content for instance in predict.instances]
        asked = [predict.parameters.output_dimensionality]
    else:
        if rpc == "batchEmbedContents":
            requests = parse(BatchEmbedRequest, body).requests
        else:
            requests = [parse(EmbedRequest, body)]
        texts = [request.content.text() for request in requests]
        asked = [request.embed_content_config.output_dimensionality for request in requests]
    for wanted in asked:
        if wanted not in (None, dimension):
            raise WireError(400, f"{model} has {dimension} dimensions; {wanted} were asked")
    return texts


def usage(outcome: Outcome) -> Json:
    return {
        "promptTokenCount": outcome.prompt_tokens,
        "candidatesTokenCount": outcome.output_tokens,
        "totalTokenCount": outcome.prompt_tokens + outcome.output_tokens,
    }


def candidate(text: str, outcome: Outcome | None, cap_seconds: float) -> Json:
    """One candidate; with ``outcome`` it is the last one and says why the generation ended."""
    found: Json = {"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}
    if outcome is not None:
        found["finishReason"] = FINISH_REASONS[outcome.finish]
        if outcome.finish == "deadline":
            found["finishMessage"] = f"stopped at the request's time limit ({cap_seconds:.1f} s)"
    return found


def generate_response(text: str, outcome: Outcome, model: str, cap_seconds: float) -> Json:
    return {
        "candidates": [candidate(text, outcome, cap_seconds)],
        "usageMetadata": usage(outcome),
        "modelVersion": model,
    }


def stream_event(text: str, outcome: Outcome | None, model: str, cap_seconds: float) -> Json:
    event: Json = {"candidates": [candidate(text, outcome, cap_seconds)], "modelVersion": model}
    if outcome is not None:
        event["usageMetadata"] = usage(outcome)
    return event


def embed_response(rpc: str, vectors: list[list[float]]) -> Json:
    if rpc == "predict":
        return {"predictions": [{"embeddings": {"values": vector}} for vector in vectors]}
    if rpc == "batchEmbedContents":
        return {"embeddings": [{"values": vector} for vector in vectors]}
    return {"embedding": {"values": vectors[0]}}
