"""The models: a chat model (LLM) and an embedder, with the requests and replies they exchange."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Literal, Protocol, TypeVar

from pydantic import BaseModel, Field

from shared.model_catalog import ModelKind
from shared.models.base import Strict

M = TypeVar("M", bound=BaseModel)


class ChatTurn(Strict):
    role: Literal["user", "assistant"]
    text: str


class LLMRequest(Strict):
    system: str = ""
    messages: list[ChatTurn]
    max_output_tokens: int = 512
    temperature: float = 0.2
    # Vertex request labels: which work the call does (shared.services.model_work)
    labels: dict[str, str] = Field(default_factory=dict)
    kind: ModelKind = "reply"  # which configured model answers (shared.model_catalog)


class Usage(Strict):
    input_tokens: int = 0
    output_tokens: int = 0  # thought tokens included: they are billed as output
    thought_tokens: int = 0  # Vertex usageMetadata.thoughtsTokenCount
    search_queries: int = 0  # grounded web search queries, billed apart from tokens


class Generation(Strict):
    text: str
    usage: Usage


class StreamChunk(Strict):
    text: str = ""
    usage: Usage | None = None  # set on the last chunk


class LLM(Protocol):
    name: str

    def generate(self, request: LLMRequest) -> Generation: ...

    def stream(self, request: LLMRequest) -> Iterator[StreamChunk]: ...

    def structured(self, request: LLMRequest, schema: type[M]) -> tuple[M, Usage]:
        """Reply constrained to ``schema``; raises ModelOutputInvalid when it does not validate."""
        ...


# What a text is embedded for: stored (a fact) or searched with (a query). Gemini embeds the
# two sides differently; a model without task types ignores it.
EmbedTask = Literal["RETRIEVAL_DOCUMENT", "RETRIEVAL_QUERY"]


class Embedder(Protocol):
    model_name: str
    dimension: int

    def embed(
        self, texts: Sequence[str], task: EmbedTask = "RETRIEVAL_DOCUMENT"
    ) -> list[list[float]]:
        """Unit-length vectors, one per text."""
        ...
