"""Serve the web client and the functions' API from one local origin.

    .venv/bin/python scripts/web_serve.py [--profile dev|test] [--port N]

``scripts/serve.py up`` starts it beside the functions (port offset 25: 8525 dev, 8625 test)
with the stack's environment; run by hand, it reads the profile's ``<state>/env``.

``GET`` serves the built client (``web/dist``, made by ``npm run build`` in ``web/``). The API
paths of ``docs/openapi.yaml`` are passed, unchanged and streamed (Server-Sent Events
included), to the function that serves them, as Firebase Hosting's rewrites would in
production: the browser sees one origin, so the functions need no CORS. ``POST /dev/token``
mints a user token with the stack's local signing key; it exists only while the stack's
``ENV`` is ``dev`` or ``test`` and is no function's code, so it is never deployed.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import mimetypes
import os
import re
import sys
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.serve import read_env  # noqa: E402
from scripts.stacklib.profile import HOST, Profile  # noqa: E402
from scripts.stacklib.tokens import mint_user_token  # noqa: E402
from shared.errors import (  # noqa: E402
    AppError,
    BadRequest,
    DependencyUnavailable,
    NotFound,
    PayloadTooLarge,
)
from shared.rest.origin import function_for as api_function_for  # noqa: E402

DIST = ROOT / "web" / "dist"
DEV_ENVS = ("dev", "test")
MAX_BODY = 1 << 20  # the functions refuse far less (64 KiB); this only bounds the proxy
USER_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
TOKEN_TTL = 12 * 3600
# Hop-by-hop headers (RFC 9110, 7.6.1) and those the proxy sets itself.
_NOT_FORWARDED = {"connection", "keep-alive", "transfer-encoding", "host", "content-length"}


def function_for(path: str) -> str | None:
    """The function that serves an API path (shared.rest.origin), or None for anything else.
    tests/unit/test_web_serve.py checks it against docs/openapi.yaml."""
    return api_function_for(path)


def static_file(dist: Path, path: str) -> Path | None:
    """The file of the built client a GET names (``/`` is index.html), never outside dist."""
    relative = "index.html" if path in ("", "/") else path.lstrip("/")
    candidate = (dist / relative).resolve()
    if not candidate.is_relative_to(dist.resolve()) or not candidate.is_file():
        return None
    return candidate


class Handler(BaseHTTPRequestHandler):
    server_version = "web-serve"
    upstreams: Mapping[str, str] = {}  # function name -> its base URL
    dist: Path = DIST
    state: Path | None = None  # the stack's state dir: set only where dev tokens are allowed

    def handle(self) -> None:
        # The browser may go away mid-answer (a closed tab, a reload): nothing to answer then.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            super().handle()

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        if str(code)[:1] in ("4", "5"):  # only refusals and failures: the log stays readable
            super().log_request(code, size)

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if function_for(path):
            self._proxy(path)
            return
        found = static_file(self.dist, path)
        if found is None:
            missing = not (self.dist / "index.html").exists()
            hint = "the client is not built: run `npm run build` in web/" if missing else ""
            self._error(NotFound(hint or "no such file"))
            return
        self._file(found)

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        if path == "/dev/token" and self.command == "POST" and self.state is not None:
            self._dev_token()
        elif function_for(path):
            self._proxy(path)
        else:
            self._error(NotFound(f"no API at {path}"))

    # Every other method goes to the function too: it answers 405 with ``Allow`` itself.
    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_QUERY = do_POST

    def _file(self, found: Path) -> None:
        body = found.read_bytes()
        kind = mimetypes.guess_type(found.name)[0] or "application/octet-stream"
        hashed = found.parent.name == "assets"  # Vite names them by content: cache for good
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=31536000, immutable" if hashed else "no-cache")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(body)

    def _error(self, error: AppError) -> None:
        """The functions' own error shape (shared/errors.py), for what the proxy refuses."""
        self._json(error.status, error.to_body())

    def _json(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> bytes | None:
        """The request's body; None when it is over the cap or its length is not a number."""
        declared = self.headers.get("Content-Length") or "0"
        if not declared.isdigit() or int(declared) > MAX_BODY:
            return None
        return self.rfile.read(int(declared))

    def _dev_token(self) -> None:
        assert self.state is not None
        raw = self._body()
        try:
            user = json.loads(raw or b"{}").get("user", "")
        except (ValueError, AttributeError):
            user = ""
        if not isinstance(user, str) or not USER_ID.match(user):
            message = "send {'user': <1-64 letters, digits, _ or ->}"
            self._error(BadRequest(message))
            return
        token = mint_user_token(self.state, user, ttl=TOKEN_TTL)
        self._json(200, {"token": token, "user": user, "expires_in": TOKEN_TTL})

    def _proxy(self, path: str) -> None:
        function = function_for(path)
        assert function is not None
        body = self._body()
        if body is None:
            message = f"a body over {MAX_BODY} bytes, or without a valid Content-Length"
            self._error(PayloadTooLarge(message))
            return
        target = urlsplit(self.upstreams[function])
        upstream = http.client.HTTPConnection(target.hostname or HOST, target.port, timeout=300)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _NOT_FORWARDED}
        try:
            upstream.request(self.command, self.path, body=body, headers=headers)
            response = upstream.getresponse()
        except OSError:
            upstream.close()
            message = f"the {function} function does not answer (is `make dev` running?)"
            self._error(DependencyUnavailable(message))
            return
        try:
            self._relay(response)
        finally:
            upstream.close()

    def _relay(self, response: http.client.HTTPResponse) -> None:
        """Status, headers, then the body as it arrives (an event stream chunk by chunk)."""
        self.send_response(response.status)
        for key, value in response.getheaders():
            if key.lower() not in _NOT_FORWARDED or key.lower() == "content-length":
                self.send_header(key, value)
        self.end_headers()
        while chunk := response.read1(65536):
            self.wfile.write(chunk)
            self.wfile.flush()


def make_server(env: Mapping[str, str], port: int, dist: Path = DIST) -> ThreadingHTTPServer:
    """The server for the stack ``env`` describes (the functions' URLs, ``ENV``, its state)."""
    upstreams = {name: env[f"{name.upper()}_URL"] for name in ("turn", "resume", "memory")}
    allowed = env.get("ENV") in DEV_ENVS and env.get("STACK_STATE_DIR")
    state = Path(env["STACK_STATE_DIR"]) if allowed else None
    handler = type("WebHandler", (Handler,), {"upstreams": upstreams, "dist": dist, "state": state})
    server = ThreadingHTTPServer((HOST, port), handler)
    server.daemon_threads = True
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", choices=["dev", "test"], default="dev")
    parser.add_argument("--port", type=int, default=None)
    args = parser.parse_args()
    port = args.port or Profile(args.profile).port("web")
    env = dict(os.environ) if "TURN_URL" in os.environ else read_env(args.profile)
    server = make_server(env, port)
    print(f"web: http://{HOST}:{port}/", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
