"""A small local fake of the Vertex AI REST API, for driving the real google-genai client.

It serves, on a free loopback port, the four calls the adapters make in Vertex mode::

    POST /v1beta1/projects/P/locations/L/publishers/google/models/M:generateContent
    POST ...:streamGenerateContent?alt=sse      (server-sent events, one response per event)
    POST ...:embedContent                        (one text)
    POST ...:batchEmbedContents                  (several texts)
    POST /v1/projects/P/locations/L/rankingConfigs/C:rank   (the ranking API; ``model`` = C)

Requests without ``Authorization: Bearer <token>`` get 401. Every request is recorded, and each
answer comes from a queue of scripted replies: a ``FakeReply`` or a function of the recorded
request, then from an optional ``fallback`` function the test gives. An unscripted request
gets 501, never an invented answer.

``latency`` makes the model as slow as a real one, deterministically: a pause before the
first byte of every generation (not of embeddings) and between the events of a stream.

Faithful by default: before any scripted reply, a request Vertex would refuse is refused with
Vertex's status and error body (``scripts/model_service/vertex_rules.py``: an empty text part,
a retired or unknown model, both thinking fields, an unsupported schema keyword, too many
texts to embed). ``gemini_like`` accepts ``pattern``/``minLength``/``maxLength`` and ignores
them, as Gemini is reported to; ``today`` dates the retirement check (default: today).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from scripts.model_service import vertex_rules
from testkit.vertex_replies import (
    FakeReply,
    Json,
    RecordedRequest,
    blocked_reply,
    embeddings_reply,
    error_reply,
    finish_reply,
    json_reply,
    ranking_reply,
    stream_reply,
    text_reply,
    throttled_reply,
)

_PATH = re.compile(
    r"^/v1beta1/projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)"
    r"/publishers/google/models/(?P<model>[^/:]+):(?P<rpc>\w+)$"
)
_RANK_PATH = re.compile(
    r"^/v1/projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)"
    r"/rankingConfigs/(?P<model>[^/:]+):(?P<rpc>rank)$"
)
Scripted = FakeReply | Callable[[RecordedRequest], FakeReply]


@dataclass(frozen=True)
class Latency:
    first_token_seconds: float = 0.0
    between_events_seconds: float = 0.0


NO_LATENCY = Latency()
_GENERATIONS = {"generateContent", "streamGenerateContent"}


class FakeVertexServer:
    def __init__(
        self,
        token: str = "test-token",
        fallback: Callable[[RecordedRequest], FakeReply] | None = None,
        latency: Latency = NO_LATENCY,
        faithful: bool = True,
        gemini_like: bool = False,
        today: date | None = None,
    ) -> None:
        self.faithful = faithful
        self.gemini_like = gemini_like
        self.today = today
        self.token = token
        self.fallback = fallback  # answers whatever the queue does not
        self.latency = latency  # may be changed while serving
        self.requests: list[RecordedRequest] = []
        self._replies: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("the fake Vertex server is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def pending(self) -> int:
        return len(self._replies)

    def add(self, *replies: Scripted) -> None:
        with self._lock:
            self._replies.extend(replies)

    def start(self) -> FakeVertexServer:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeVertexServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _answer(self, request: RecordedRequest) -> FakeReply:
        with self._lock:
            self.requests.append(request)
            if not request.authorized:
                return error_reply(401, "Request had invalid authentication credentials.")
            if not request.rpc:
                return error_reply(404, f"unknown path {request.path}")
            refusal = self._refusal(request) if self.faithful else None
            if refusal is not None:
                return FakeReply(status=refusal.status, body=refusal.body())
            scripted = self._replies.popleft() if self._replies else None
        if scripted is None and self.fallback is not None:
            return self.fallback(request)
        if scripted is None:
            return error_reply(501, f"fake Vertex: no scripted reply for {request.rpc}")
        return scripted(request) if callable(scripted) else scripted

    def _refusal(self, request: RecordedRequest) -> vertex_rules.Refusal | None:
        if request.rpc == "rank":
            return None
        today = self.today or date.today()
        found = vertex_rules.model_refusal(request.model, today)
        if found is None and request.rpc in _GENERATIONS:
            found = vertex_rules.generate_refusal(request.model, request.body, self.gemini_like)
        if found is None:
            found = vertex_rules.embed_refusal(request.model, request.rpc, request.body)
        return found


def _handler_for(fake: FakeVertexServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            match = _PATH.match(url.path) or _RANK_PATH.match(url.path)
            request = RecordedRequest(
                path=url.path,
                query=parse_qs(url.query),
                headers={k.lower(): v for k, v in self.headers.items()},
                body=json.loads(raw) if raw else {},
                authorized=self.headers.get("Authorization") == f"Bearer {fake.token}",
                **(match.groupdict() if match else {}),
            )
            reply = fake._answer(request)
            latency = fake.latency if request.rpc in _GENERATIONS else NO_LATENCY
            time.sleep(latency.first_token_seconds + reply.delay)
            if reply.events and reply.status == 200:
                self._send_events(reply.events, reply.pause or latency.between_events_seconds)
            else:
                self._send_json(reply.status, reply.body)

        def _send_json(self, status: int, body: Json) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _send_events(self, events: Sequence[Json], pause: float) -> None:
            # HTTP/1.0 without a length: the body ends when the connection closes.
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for number, event in enumerate(events):
                if number and pause:
                    time.sleep(pause)
                try:
                    self.wfile.write(f"data: {json.dumps(event)}\r\n\r\n".encode())
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client stopped reading (an interrupted reply)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean; requests are recorded instead

    return Handler


__all__ = [
    "FakeReply",
    "FakeVertexServer",
    "Latency",
    "RecordedRequest",
    "blocked_reply",
    "embeddings_reply",
    "error_reply",
    "finish_reply",
    "json_reply",
    "ranking_reply",
    "stream_reply",
    "text_reply",
    "throttled_reply",
]
