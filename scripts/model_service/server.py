"""The service's HTTP front: routes, the bearer token, body limits, errors, SSE.

    POST /v1beta1/projects/P/locations/L/publishers/google/models/M:generateContent
    POST ...:streamGenerateContent?alt=sse      (server-sent events, one response each)
    POST ...:embedContent | ...:batchEmbedContents | ...:predict   (embeddings)
    GET  /healthz                                (no token: lanes, limits, finish counts)

Errors use Vertex's body (``{"error": {"code", "message", "status"}}``) and statuses: 401
without the token, 404 for another model or path, 400 for a body the service cannot serve,
413 over the size cap, 429 when the request could not be admitted in time (nothing ran).
"""

from __future__ import annotations

import hmac
import json
import logging
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from scripts.model_service import vertex_wire as wire
from scripts.model_service.calls import EngineError, Json
from scripts.model_service.lanes import Overloaded, Preempted
from scripts.model_service.service import Budget, ModelService

log = logging.getLogger("model_service")

MAX_BODY_BYTES = 4 * 1024 * 1024


def build_server(service: ModelService, token: str, host: str, port: int) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer((host, port), _handler_for(service, token))
    server.daemon_threads = True
    return server


def _handler_for(service: ModelService, token: str) -> type[BaseHTTPRequestHandler]:
    expected = f"Bearer {token}".encode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive for JSON; an event stream closes at its end
        streaming = False  # the status line of an event stream has gone out
        body_read = False
        # Headers and body leave in separate writes: without this, Nagle's algorithm holds
        # the body until the client's delayed ACK, ~40 ms on every answer.
        disable_nagle_algorithm = True

        def do_GET(self) -> None:
            if urlsplit(self.path).path != "/healthz":
                self._send_json(404, wire.WireError(404, "no such resource").body())
                return
            self._send_json(200, service.health())

        def do_POST(self) -> None:
            arrival = time.monotonic()
            try:
                self._serve(arrival)
            except wire.WireError as exc:
                self._refuse(exc)
            except Overloaded as exc:
                self._refuse(wire.WireError(429, f"the local model is busy: {exc}"))
            except Preempted as exc:  # the client's retry queues behind the reply
                self._refuse(wire.WireError(503, f"the local model preempted this call: {exc}"))
            except EngineError as exc:
                self._refuse(wire.WireError(exc.status, f"the local model refused: {exc}"))
            except Exception:  # the edge: a bug is logged with its request and answered 500
                log.exception("failed: POST %s", self.path)
                self._refuse(wire.WireError(500, "the local model service failed; see its log"))

        def _serve(self, arrival: float) -> None:
            given = self.headers.get("Authorization", "").encode()
            if not hmac.compare_digest(given, expected):
                raise wire.WireError(401, "Request had invalid authentication credentials.")
            url = urlsplit(self.path)
            route = wire.route(url.path)
            body = self._read_json()
            budget = Budget.starting(arrival, self.headers.get("X-Server-Timeout"), service.limits)
            if route.rpc == "generateContent":
                self._send_json(200, service.generate(route, body, budget))
            elif route.rpc == "streamGenerateContent":
                if parse_qs(url.query).get("alt") != ["sse"]:
                    raise wire.WireError(400, "only ?alt=sse streams are served")
                service.stream(route, body, budget, self._send_event)
            elif route.rpc in wire.EMBEDDING_RPCS:
                self._send_json(200, service.embed(route, body, budget))
            else:
                raise wire.WireError(404, f"method {route.rpc} is not served")

        def _read_json(self) -> object:
            length = self.headers.get("Content-Length")
            if length is None or not length.isdigit():
                raise wire.WireError(411, "a Content-Length is required")
            if int(length) > MAX_BODY_BYTES:
                raise wire.WireError(413, f"the body is over {MAX_BODY_BYTES} bytes")
            try:
                self.body_read = True
                return json.loads(self.rfile.read(int(length)))
            except (ValueError, UnicodeDecodeError) as exc:
                raise wire.WireError(400, f"the body is not JSON: {exc}") from exc

        def _refuse(self, error: wire.WireError) -> None:
            # The body may be unread: it must not be taken for the next request. It is read
            # (when it is no larger than a request may be) before the answer goes out, and the
            # answer says the connection closes: a socket closed with unread bytes resets, and
            # a client that pooled it met "server disconnected" on its next call.
            self.close_connection = True
            self._drain()
            if self.streaming:
                return  # the status line is out: ending the stream is all that is left
            log.info("%s refused %d: %s", self.path.rsplit(":", 1)[-1], error.status, error)
            self._send_json(error.status, error.body())

        def _drain(self) -> None:
            length = self.headers.get("Content-Length", "")
            if self.body_read or not length.isdigit():
                return
            if int(length) <= MAX_BODY_BYTES:
                self.rfile.read(int(length))

        def _send_json(self, status: int, body: Json) -> None:
            payload = json.dumps(body, separators=(",", ":")).encode()  # vectors: keep it small
            self.send_response(status)
            headers = {"Content-Type": "application/json", "Content-Length": str(len(payload))}
            if self.close_connection:  # said, so a client does not reuse the closed socket
                headers["Connection"] = "close"
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def _send_event(self, event: Json) -> bool:
            """One server-sent event. The status line goes out with the first one, so a
            request refused before any output still gets its own status."""
            try:
                if not self.streaming:
                    self.streaming = True
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Cache-Control", "no-cache")
                    self.send_header("Connection", "close")  # the body ends when it closes
                    self.end_headers()
                    self.close_connection = True
                self.wfile.write(f"data: {json.dumps(event)}\r\n\r\n".encode())
                self.wfile.flush()
            except OSError:  # the client went away: stop generating for it
                return False
            return True

        def log_message(self, format: str, *args: Any) -> None:
            pass  # one line per generation is logged by the service instead

    return Handler
