"""What the service does with a request, apart from HTTP: admission, deadlines, the engines.

Every request has a budget. It may wait in its engine's lane until ``max_queue_seconds``
after it arrived (then it is refused with 429 and nothing ran), and a generation runs for at
most ``max_generation_seconds`` once admitted (then it stops between two tokens and answers
what it has, finish reason ``OTHER``). A client that announces its own timeout
(``X-Server-Timeout``, sent by google-genai) shortens both, so the answer comes before the
client gives up. Output tokens are capped at ``max_output_tokens`` whatever is asked.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass

from scripts.model_service import slices, vertex_rules
from scripts.model_service import vertex_wire as wire
from scripts.model_service.calls import (
    ChatCall,
    EmbeddingEngine,
    Json,
    OnText,
    Outcome,
    TextEngine,
)
from scripts.model_service.lanes import Hold, Lane, Preempted

log = logging.getLogger("model_service")

# Called with each server-sent event; False means the client has gone.
SendEvent = Callable[[Json], bool]


@dataclass(frozen=True)
class Limits:
    """Defaults for SmolLM2 on one thread (~60 tokens/s): 384 tokens take ~6.5 s, and a
    reply longer than that from a 135M model is rambling that holds up everyone queued."""

    max_output_tokens: int = 384
    max_generation_seconds: float = 10.0
    max_queue_seconds: float = 30.0
    max_waiting: int = 32  # requests waiting for the text engine; more are refused at once
    # Generations decoded together (llama.cpp's parallel slots), and how many of them
    # background callers may hold at once (``None``: all but one, or the one).
    slots: int = 1
    background_slots: int | None = None
    preempt: bool = True  # a waiting reply stops a running background generation
    # A free-text reply that has produced this many tokens in its slice pauses for a reply
    # next in line that has run fewer slices, and resumes after it (lanes.py, slices.py);
    # 24 tokens: ~0.2 s of SmolLM2 on one thread. 0: every reply runs to its end.
    slice_tokens: int = 24
    aging_seconds: float = 5.0  # a caller waiting this long goes first (nobody starves)
    # Gemini-like: responseJsonSchema's pattern/minLength/maxLength are accepted and dropped
    # before the grammar is built, as Gemini ignores them; otherwise they are refused.
    gemini_like: bool = False


@dataclass(frozen=True)
class Budget:
    """A request's deadlines on the ``time.monotonic()`` clock."""

    queue: float  # give up waiting for the engine
    generation_seconds: float  # run at most this long once admitted
    client: float  # the client's own timeout (inf if it gave none)

    @classmethod
    def starting(cls, arrival: float, client_timeout: str | None, limits: Limits) -> Budget:
        client = math.inf
        try:
            seconds = float(client_timeout or "inf")
        except ValueError:
            seconds = math.inf  # a malformed header is no reason to refuse the request
        if 0 < seconds < math.inf:
            client = arrival + seconds * 0.9  # leave the answer time to travel back
        return cls(
            min(arrival + limits.max_queue_seconds, client), limits.max_generation_seconds, client
        )

    def generation(self, admitted: float) -> float:
        return min(admitted + self.generation_seconds, self.client)


class ModelService:
    def __init__(self, text: TextEngine, embeddings: EmbeddingEngine, limits: Limits) -> None:
        self.text = text
        self.embeddings = embeddings
        self.limits = limits
        self.text_lane = Lane(
            limits.slots,
            limits.max_waiting,
            limits.background_slots,
            limits.preempt,
            limits.slice_tokens,
            limits.aging_seconds,
        )
        # Embeddings take milliseconds: their own lane, so a query's vector never waits
        # behind a whole generation (the service process runs numpy on one thread).
        self.embedding_lane = Lane(slots=1, max_waiting=limits.max_waiting * 4)
        self._lock = threading.Lock()
        self._outcomes: dict[str, int] = {}

    def generate(self, route: wire.Route, body: object, budget: Budget) -> Json:
        self._check_model(route.model, self.text.name)
        self._refuse(route.model, body)  # first: Vertex's refusal, not the parser's
        request = wire.parse(wire.GenerateRequest, body)
        call = wire.chat_call(request, self.limits.max_output_tokens, self.limits.gemini_like)
        pieces: list[str] = []

        def keep(text: str) -> bool:
            pieces.append(text)
            return True

        # Only a whole answer can be refused after it began: a stream's events are out.
        ran = self._run(route, request, call, budget, keep, preemptible=True)
        if ran.hold.preempted and ran.hold.preemptible and ran.outcome.finish == "cancelled":
            raise Preempted(f"stopped after {ran.outcome.output_tokens} tokens for a reply")
        text = "".join(pieces)
        return wire.generate_response(text, ran.outcome, self.text.name, ran.cap_seconds)

    def stream(self, route: wire.Route, body: object, budget: Budget, send: SendEvent) -> None:
        """Server-sent events, one per piece of text; the last one carries the finish reason
        and the usage (one piece is held back so that it can)."""
        self._check_model(route.model, self.text.name)
        self._refuse(route.model, body)  # first: Vertex's refusal, not the parser's
        request = wire.parse(wire.GenerateRequest, body)
        call = wire.chat_call(request, self.limits.max_output_tokens, self.limits.gemini_like)
        held: list[str] = []
        name = self.text.name

        def on_text(text: str) -> bool:
            ready = held.pop() if held else None
            held.append(text)
            return ready is None or send(wire.stream_event(ready, None, name, 0.0))

        ran = self._run(route, request, call, budget, on_text, preemptible=False)
        if ran.outcome.finish != "cancelled":
            send(wire.stream_event("".join(held), ran.outcome, name, ran.cap_seconds))

    def _run(
        self,
        route: wire.Route,
        request: wire.GenerateRequest,
        call: ChatCall,
        budget: Budget,
        on_text: OnText,
        preemptible: bool,
    ) -> slices.Ran:
        deadlines = slices.Deadlines(
            budget.queue, budget.generation_seconds, budget.client, self.limits.max_queue_seconds
        )

        def record(outcome: Outcome, hold: Hold, ran: float) -> None:
            self._record(route.rpc, outcome, hold, ran, request.labels)

        return slices.run(
            self.text_lane, self.text, call, deadlines, request.background, preemptible,
            on_text, record,
        )  # fmt: skip

    def embed(self, route: wire.Route, body: object, budget: Budget) -> Json:
        self._check_model(route.model, self.embeddings.model_name)
        refusal = vertex_rules.embed_refusal(route.model, route.rpc, _as_json(body))
        if refusal is not None:
            raise wire.WireError(refusal.status, refusal.message)
        texts = wire.embed_texts(route.rpc, body, self.embeddings.dimension, route.model)
        with self.embedding_lane.slot(budget.queue):
            vectors = self.embeddings.embed(texts)
        return wire.embed_response(route.rpc, vectors)

    def health(self) -> Json:
        with self._lock:
            outcomes = dict(self._outcomes)
        return {
            "status": "ok",
            "models": {"text": self.text.name, "embedding": self.embeddings.model_name},
            "limits": asdict(self.limits),
            "text_lane": asdict(self.text_lane.stats()),
            "embedding_lane": asdict(self.embedding_lane.stats()),
            "finished": outcomes,
        }

    def _refuse(self, model: str, body: object) -> None:
        """What Vertex would refuse is refused here too (``vertex_rules``)."""
        refusal = vertex_rules.generate_refusal(model, _as_json(body), self.limits.gemini_like)
        if refusal is not None:
            raise wire.WireError(refusal.status, refusal.message)

    def _check_model(self, asked: str, served: str) -> None:
        if asked != served:
            raise wire.WireError(404, f"model {asked} is not served here (it serves {served})")

    def _record(
        self, rpc: str, outcome: Outcome, hold: Hold, ran: float, labels: dict[str, str]
    ) -> None:
        """Counts and logs the generation (a slice, a preempted one by that name)."""
        finish: str = outcome.finish
        if hold.preempted and outcome.finish == "cancelled":
            finish = "paused" if hold.resumable else "preempted"
        with self._lock:
            self._outcomes[finish] = self._outcomes.get(finish, 0) + 1
        log.info(
            "%s work=%s finish=%s waited=%.0fms ran=%.0fms prompt=%d (cached %d) output=%d",
            rpc,
            labels.get("work", "-"),
            finish,
            hold.waited * 1000,
            ran * 1000,
            outcome.prompt_tokens,
            outcome.cached_tokens,
            outcome.output_tokens,
        )


def _as_json(body: object) -> Json:
    return body if isinstance(body, dict) else {}
