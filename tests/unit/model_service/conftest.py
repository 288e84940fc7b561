"""The model service with in-memory engines behind its engine port, served on a free port.

The production ``vertex`` adapters drive it, so the Vertex translation (URLs, bodies, SSE,
errors) is tested without loading any weights.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest

from scripts.model_service.calls import ChatCall, OnText, Outcome
from scripts.model_service.server import build_server
from scripts.model_service.service import Limits, ModelService
from shared.adapters import model_guard
from shared.adapters.vertex_llm import build_vertex
from shared.config import Settings
from shared.ports import LLM, Embedder, EmbedTask

TOKEN = "unit-token"
TEXT_MODEL = "scripted-text"
EMBEDDING_MODEL = "all-MiniLM-L6-v2"


@dataclass
class ScriptedEngine:
    """Answers every call with ``pieces``, one per step (a resumed call: those after its
    prefill); honours the deadline like llama.cpp (between two pieces) and, while ``hold`` is
    set, waits before its first piece."""

    pieces: Sequence[str] = ("Hello", " there", ".")
    seconds_per_piece: float = 0.0
    name: str = TEXT_MODEL
    calls: list[ChatCall] = field(default_factory=list)
    hold: threading.Event = field(default_factory=threading.Event)
    started: threading.Event = field(default_factory=threading.Event)
    by_message: dict[str, Sequence[str]] = field(default_factory=dict)  # the last user text
    emitted: int = 0  # pieces handed out, over all calls

    def chat(self, call: ChatCall, deadline: float, on_text: OnText) -> Outcome:
        self.calls.append(call)
        self.started.set()
        while self.hold.is_set():
            time.sleep(0.005)
        pieces = self.by_message.get(call.messages[-1][1] if call.messages else "", self.pieces)
        sent, start = 0, _resumed_at(pieces, call.prefill)
        for piece in pieces[start : start + call.max_tokens]:
            if time.monotonic() >= deadline:
                return Outcome("deadline", 7, sent)
            self.emitted += 1
            if not on_text(piece):
                return Outcome("cancelled", 7, sent)
            sent += 1
            time.sleep(self.seconds_per_piece)
        finish = "length" if sent == call.max_tokens < len(pieces) - start else "stop"
        return Outcome(finish, 7, sent)


def _resumed_at(pieces: Sequence[str], prefill: str) -> int:
    """How many pieces a resumed call's ``prefill`` already holds (it continues after them)."""
    start = 0
    while start < len(pieces) and len("".join(pieces[:start])) < len(prefill):
        start += 1
    if "".join(pieces[:start]) != prefill:
        raise AssertionError(f"the prefill {prefill!r} is not the start of the script")
    return start


class UnitVectors:
    """A 384-dimension embedder: text of length n -> the unit vector on axis n % 384."""

    model_name = EMBEDDING_MODEL
    dimension = 384

    def embed(
        self, texts: Sequence[str], task: EmbedTask = "RETRIEVAL_DOCUMENT"
    ) -> list[list[float]]:
        vectors = []
        for text in texts:
            vector = [0.0] * self.dimension
            vector[len(text) % self.dimension] = 1.0
            vectors.append(vector)
        return vectors


@dataclass
class Running:
    url: str
    service: ModelService
    engine: ScriptedEngine

    def settings(self, token: str = TOKEN, **changes: object) -> Settings:
        values: dict[str, object] = {
            "model_provider": "vertex",
            "vertex_base_url": self.url,
            "vertex_access_token": token,
            **Settings.one_model(TEXT_MODEL),
            "vertex_embedding_model": EMBEDDING_MODEL,
            "embedding_dimension": 384,
            **changes,
        }
        return Settings(**values)  # type: ignore[arg-type]

    def models(self, **changes: object) -> tuple[LLM, Embedder]:
        return build_vertex(self.settings(**changes))


@pytest.fixture(autouse=True)
def allow_model_requests() -> Iterator[None]:
    """The adapters call the in-memory service on purpose."""
    with model_guard.override_allow_model_requests(True):
        yield


@contextmanager
def serving(engine: ScriptedEngine, limits: Limits) -> Iterator[Running]:
    service = ModelService(engine, UnitVectors(), limits)
    server = build_server(service, TOKEN, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02})
    thread.start()
    try:
        yield Running(f"http://127.0.0.1:{server.server_address[1]}", service, engine)
    finally:
        engine.hold.clear()
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def engine() -> ScriptedEngine:
    return ScriptedEngine()


@pytest.fixture
def limits() -> Limits:
    return Limits(max_output_tokens=64, max_generation_seconds=5.0, max_queue_seconds=5.0)


@pytest.fixture
def running(engine: ScriptedEngine, limits: Limits) -> Iterator[Running]:
    with serving(engine, limits) as served:
        yield served
