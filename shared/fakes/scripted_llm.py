"""The test model and a model-free embedder.

``ScriptedLLM`` answers from a queue of scripted replies, then from an optional handler
``(request, schema) -> reply`` (like pydantic-ai's TestModel and FunctionModel). It records every
call and never invents output: an empty script is an error. A reply may be text, a pydantic model
or dict (for ``structured``), or an exception to raise, so tests can drive error paths too.

``HashEmbedder`` hashes word tokens and character trigrams into a fixed number of buckets, so
texts sharing words or word pieces share components; it is deterministic across processes.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, TypeVar

from pydantic import BaseModel, ValidationError

from shared.errors import ModelOutputInvalid
from shared.ports import EmbedTask, Generation, LLMRequest, StreamChunk, Usage

M = TypeVar("M", bound=BaseModel)

Reply: TypeAlias = str | BaseModel | dict[str, Any] | Exception
Handler: TypeAlias = Callable[[LLMRequest, type[BaseModel] | None], Reply]
CallKind = Literal["generate", "stream", "structured"]

_WORDS = re.compile(r"\w+", re.UNICODE)
_STREAM_PIECES = re.compile(r"\s*\S+\s*")


class ScriptExhausted(AssertionError):
    """The test asked the model more often than it scripted; a test bug, never caught."""


@dataclass(frozen=True)
class ScriptedCall:
    kind: CallKind
    request: LLMRequest
    schema: type[BaseModel] | None


def _count_words(text: str) -> int:
    return len(_WORDS.findall(text))


def _usage(request: LLMRequest, output: str) -> Usage:
    prompt = " ".join([request.system, *(turn.text for turn in request.messages)])
    return Usage(input_tokens=_count_words(prompt), output_tokens=_count_words(output))


class ScriptedLLM:
    name = "scripted"

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        handler: Handler | None = None,
        words_per_chunk: int = 1,
        chunk_seconds: float = 0.0,
    ) -> None:
        self._replies: deque[Reply] = deque(replies)
        self._handler = handler
        self._words_per_chunk = max(1, words_per_chunk)
        self._chunk_seconds = chunk_seconds  # a pause before each streamed chunk (latency)
        self._lock = threading.Lock()
        self.calls: list[ScriptedCall] = []

    @property
    def requests(self) -> list[LLMRequest]:
        return [call.request for call in self.calls]

    @property
    def pending(self) -> int:
        return len(self._replies)

    def add(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def generate(self, request: LLMRequest) -> Generation:
        text = self._text_reply(self._next("generate", request, None))
        return Generation(text=text, usage=_usage(request, text))

    def stream(self, request: LLMRequest) -> Iterator[StreamChunk]:
        text = self._text_reply(self._next("stream", request, None))
        pieces = _STREAM_PIECES.findall(text) or [text]
        step = self._words_per_chunk
        for start in range(0, len(pieces), step):
            if self._chunk_seconds:
                time.sleep(self._chunk_seconds)
            yield StreamChunk(text="".join(pieces[start : start + step]))
        yield StreamChunk(usage=_usage(request, text))

    def structured(self, request: LLMRequest, schema: type[M]) -> tuple[M, Usage]:
        reply = self._next("structured", request, schema)
        try:
            if isinstance(reply, str):
                value = schema.model_validate_json(reply)
            elif isinstance(reply, BaseModel):
                value = schema.model_validate(reply.model_dump())
            else:
                value = schema.model_validate(reply)
        except ValidationError as exc:
            raise ModelOutputInvalid(f"scripted reply does not match {schema.__name__}") from exc
        return value, _usage(request, value.model_dump_json())

    def _next(self, kind: CallKind, request: LLMRequest, schema: type[BaseModel] | None) -> Reply:
        with self._lock:
            self.calls.append(ScriptedCall(kind=kind, request=request, schema=schema))
            reply = self._replies.popleft() if self._replies else None
        if reply is None:
            if self._handler is None:
                raise ScriptExhausted(
                    f"ScriptedLLM has no reply left for call #{len(self.calls)} ({kind}); "
                    "script more replies or give it a handler"
                )
            reply = self._handler(request, schema)
        if isinstance(reply, Exception):
            raise reply
        return reply

    @staticmethod
    def _text_reply(reply: Reply) -> str:
        if not isinstance(reply, str):
            raise TypeError(f"a text call needs a str reply, got {type(reply).__name__}")
        return reply


class HashEmbedder:
    """Feature hashing of words (weight 1) and character trigrams (weight 0.5), L2-normalised."""

    def __init__(self, dimension: int = 768) -> None:
        if dimension < 8:
            raise ValueError("dimension must be at least 8")
        self.dimension = dimension
        self.model_name = f"hash-{dimension}"

    def embed(
        self, texts: Sequence[str], task: EmbedTask = "RETRIEVAL_DOCUMENT"
    ) -> list[list[float]]:
        return [self._embed_one(text) for text in texts]

    def _embed_one(self, text: str) -> list[float]:
        vector = [0.0] * self.dimension
        words = [word.lower() for word in _WORDS.findall(text)] or ["<empty>"]
        for word in words:
            self._add(vector, f"w:{word}", 1.0)
            padded = f"<{word}>"
            for i in range(len(padded) - 2):
                self._add(vector, f"c:{padded[i : i + 3]}", 0.5)
        norm = math.sqrt(sum(value * value for value in vector))
        if norm == 0.0:  # features cancelled out exactly: still return a unit vector
            return [1.0] + [0.0] * (self.dimension - 1)
        return [value / norm for value in vector]

    def _add(self, vector: list[float], feature: str, weight: float) -> None:
        digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
        bucket = int.from_bytes(digest[:4], "little") % self.dimension
        # A signed hash keeps collisions from adding up to spurious similarity.
        sign = 1.0 if digest[4] & 1 else -1.0
        vector[bucket] += sign * weight
