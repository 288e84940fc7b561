"""What the service asks of its engines, and what they answer: the engines' port.

The HTTP front and the Vertex translation speak only these types, so they are tested with
in-memory engines, and the real ones (llama.cpp, the numpy MiniLM) plug in at start.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

Json = dict[str, Any]
Role = Literal["user", "assistant"]
# stop: the model ended; length: max tokens; deadline: the wall-clock cap stopped it;
# cancelled: the caller went away (a closed stream).
Finish = Literal["stop", "length", "deadline", "cancelled"]


@dataclass(frozen=True)
class ChatCall:
    """One generation. ``schema`` (a JSON schema) constrains the output to it; ``prefill``
    is the start of the answer, which the engine continues (a paused reply resumed)."""

    system: str
    messages: tuple[tuple[Role, str], ...]
    max_tokens: int
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    schema: Json | None = None
    json_mode: bool = False
    prefill: str = ""


@dataclass(frozen=True)
class Outcome:
    finish: Finish
    prompt_tokens: int
    output_tokens: int
    cached_tokens: int = 0  # of the prompt, taken from an earlier call's cache


class EngineError(Exception):
    """The engine refused the call: ``status`` 400 when the call itself is at fault (e.g. a
    prompt longer than the context), 500 otherwise."""

    def __init__(self, message: str, status: int = 500) -> None:
        super().__init__(message)
        self.status = status


# Called with each new piece of text; False means nobody listens any more: stop.
OnText = Callable[[str], bool]


class TextEngine(Protocol):
    name: str

    def chat(self, call: ChatCall, deadline: float, on_text: OnText) -> Outcome:
        """Generate until the model stops, ``max_tokens``, ``on_text`` says stop, or
        ``time.monotonic()`` passes ``deadline``."""
        ...


class EmbeddingEngine(Protocol):
    model_name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...
