"""Realistic timing for the fake Vertex endpoint: time to first token and output speed per model.

``timed(answer, profiles)`` wraps a fallback of ``FakeVertexServer``: the answer is what
``answer`` says, delivered as a model of that speed would deliver it. A streamed reply is
cut into events of ``TOKENS_PER_EVENT`` tokens (Vertex sends a few tokens per server-sent
event), the first after the model's time to first token, the next ones at its output speed;
a unary answer (a classification, a summary) arrives whole after the first token plus all
its tokens. Every generation is logged (``Call``: model, rpc, start, tokens), so a bench can
count the calls a turn made before its first chunk and what they cost.

Defaults (``PUBLISHED``) for the models the catalog configures (``shared.model_catalog``).
No measurement of the 3.5 generation had been published where we looked, so each default is
its predecessor's published figure, an assumption labelled as such:

- Flash (reply, planning): Gemini 3 Flash, 218 output tokens/s and a median time to first
  token of 1.11 s, "often sub-800 ms" for short queries (third-party speed test on AI Studio,
  https://mail.zapsas.tech/article/0005-gemini-3-flash-speed-test). We take 800 ms: our
  prompts are short.
- Flash-Lite (routing, extraction): Gemini 2.5 Flash-Lite, 0.29 s to first token and
  392.8 tokens/s (https://galileo.ai/model-hub/gemini-2-5-flash-lite-overview, citing
  Artificial Analysis); Gemini 3.1 Flash-Lite is announced at 363 tokens/s and a first token
  2.5x faster than 2.5 Flash (https://www.mejba.me/de/blog/gemini-flashlight-speed-test;
  https://blockchain.news/ainews/gemini-3-1-flash-lite-breakthrough-2-5x-faster-first-token-45-higher-output-speed-latest-performance-analysis).
  We take 300 ms and 363 tokens/s.

Tokens are counted as characters / 4 (Gemini's own rule of thumb for English).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from testkit.vertex_replies import FakeReply, RecordedRequest

TOKENS_PER_EVENT = 8
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class Speed:
    first_token_ms: float
    tokens_per_second: float
    assumed: bool = True  # the figure is another generation's (see the module docstring)


FLASH = Speed(800.0, 218.0)
FLASH_LITE = Speed(300.0, 363.0)
PUBLISHED: dict[str, Speed] = {
    "gemini-3.5-flash": FLASH,
    "gemini-3.5-flash-lite": FLASH_LITE,
    "gemini-3.1-flash-lite": replace(FLASH_LITE, assumed=False),
    "gemini-2.5-flash-lite": Speed(290.0, 392.8, assumed=False),
}


@dataclass(frozen=True)
class Answer:
    text: str  # a JSON text for a structured answer
    streamed: bool


@dataclass(frozen=True)
class Call:
    model: str
    rpc: str
    started: float  # time.perf_counter(), seconds
    input_tokens: int
    output_tokens: int


def tokens(text: str) -> int:
    return max(1, round(len(text) / CHARS_PER_TOKEN))


def _input_tokens(request: RecordedRequest) -> int:
    said = [request.body.get("contents"), request.body.get("systemInstruction")]
    return tokens(json.dumps(said))


class Timed:
    """The fallback: ``answer`` decides the text, the model's ``Speed`` its timing."""

    def __init__(
        self,
        answer: Callable[[RecordedRequest], str],
        speeds: dict[str, Speed] | None = None,
    ) -> None:
        self.answer = answer
        self.speeds = dict(PUBLISHED if speeds is None else speeds)
        self.calls: list[Call] = []
        self._lock = threading.Lock()

    def speed(self, model: str) -> Speed:
        found = self.speeds.get(model)
        if found is None:
            raise KeyError(f"no speed for model {model}: give one (--speed {model}=MS,TPS)")
        return found

    def __call__(self, request: RecordedRequest) -> FakeReply:
        started = time.perf_counter()
        if request.rpc not in ("generateContent", "streamGenerateContent"):
            raise ValueError(f"timed fake: {request.rpc} is not a generation")
        text, speed = self.answer(request), self.speed(request.model)
        out = tokens(text)
        with self._lock:
            self.calls.append(
                Call(request.model, request.rpc, started, _input_tokens(request), out)
            )
        first = speed.first_token_ms / 1000
        if request.rpc == "generateContent":
            return _unary(text, delay=first + out / speed.tokens_per_second)
        return _streamed(text, speed, delay=first)

    def since(self, mark: int) -> list[Call]:
        with self._lock:
            return self.calls[mark:]


def _unary(text: str, delay: float) -> FakeReply:
    candidate = {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}
    usage = {"promptTokenCount": 5, "candidatesTokenCount": tokens(text)}
    return FakeReply(body={"candidates": [candidate], "usageMetadata": usage}, delay=delay)


def _streamed(text: str, speed: Speed, delay: float) -> FakeReply:
    words, pieces, size = text.split(" "), [], TOKENS_PER_EVENT * CHARS_PER_TOKEN
    piece = ""
    for word in words:
        piece = f"{piece} {word}" if piece else word
        if len(piece) >= size:
            pieces.append(piece + " ")
            piece = ""
    if piece:
        pieces.append(piece)
    events = []
    for i, said in enumerate(pieces):
        last = i == len(pieces) - 1
        candidate: dict[str, object] = {"content": {"role": "model", "parts": [{"text": said}]}}
        if last:
            candidate["finishReason"] = "STOP"
        usage = {"promptTokenCount": 5, "candidatesTokenCount": tokens("".join(pieces[: i + 1]))}
        events.append({"candidates": [candidate], "usageMetadata": usage})
    pause = TOKENS_PER_EVENT / speed.tokens_per_second
    return FakeReply(events=tuple(events), pause=pause, delay=delay)


def parse_speed(option: str) -> tuple[str, Speed]:
    """``MODEL=MS,TPS`` from the command line."""
    model, _, figures = option.partition("=")
    ms, _, tps = figures.partition(",")
    return model, Speed(float(ms), float(tps))
