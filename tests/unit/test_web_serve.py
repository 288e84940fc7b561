"""scripts/web_serve.py: the web client's origin. Its route table against docs/openapi.yaml,
and the server on loopback in front of a stand-in function: paths and headers passed on
unchanged, an event stream relayed as it is produced, the dev token minted only locally."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.client import HTTPConnection
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jwt
import pytest

from scripts.stacklib.tokens import USER_AUDIENCE, USER_ISSUER, ensure_keys, jwks_path
from scripts.web_serve import function_for, make_server, static_file

ROOT = Path(__file__).resolve().parents[2]


def documented_paths() -> list[str]:
    """Each path of docs/openapi.yaml, its variables filled in."""
    text = (ROOT / "docs" / "openapi.yaml").read_text()
    return [re.sub(r"\{(\w+)\}", r"\1-1", path) for path in re.findall(r"^  (/\S*):$", text, re.M)]


def test_every_documented_path_goes_to_a_function_and_only_those() -> None:
    documented = documented_paths()
    assert len(documented) > 20 and all(path.startswith("/v1/") for path in documented)
    assert None not in {function_for(path) for path in documented}
    for gone in ("/turn", "/resume", "/messages", "/chats", "/facts/list", "/export"):
        assert function_for(gone) is None, gone


def test_static_files_never_leave_the_build(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text("<html>")
    (dist / "assets" / "app.js").write_text("x")
    (tmp_path / "secret.txt").write_text("no")
    assert static_file(dist, "/") == (dist / "index.html").resolve()
    assert static_file(dist, "/assets/app.js") == (dist / "assets" / "app.js").resolve()
    for outside in ("/../secret.txt", "/assets/../../secret.txt", "/assets", "/missing.js"):
        assert static_file(dist, outside) is None, outside


class _Function(BaseHTTPRequestHandler):
    """Stands in for a function: records requests; a chat's messages stream two events, the second
    only once the test has seen the first."""

    seen: list[dict[str, Any]]
    first_read: threading.Event

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.seen.append({"path": self.path, "headers": dict(self.headers), "body": body})
        if self.path != "/v1/chats/c1/messages":
            data = json.dumps({"error": {"code": "not_found", "message": "x"}}).encode()
            self.send_response(404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(b'event: chunk\ndata: {"text": "a"}\n\n')
        self.wfile.flush()
        assert self.first_read.wait(10), "the first event was not relayed before the second"
        self.wfile.write(b'event: done\ndata: {"chat_id": "c"}\n\n')

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serving(server: ThreadingHTTPServer) -> Iterator[int]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def function() -> Iterator[tuple[str, type[_Function]]]:
    handler = type("Function", (_Function,), {"seen": [], "first_read": threading.Event()})
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as port:
        yield f"http://127.0.0.1:{port}/", handler


@contextmanager
def web(function_url: str, state: Path, env: str = "test") -> Iterator[HTTPConnection]:
    urls = {f"{name}_URL": function_url for name in ("TURN", "RESUME", "MEMORY")}
    server = make_server({**urls, "ENV": env, "STACK_STATE_DIR": str(state)}, 0, state / "dist")
    with serving(server) as port:
        yield HTTPConnection("127.0.0.1", port, timeout=10)


def test_the_api_is_passed_on_unchanged_and_a_stream_relayed_as_it_comes(
    function: tuple[str, type[_Function]], tmp_path: Path
) -> None:
    url, handler = function
    with web(url, tmp_path) as browser:
        browser.request(
            "POST", "/v1/chats/c1/messages", b'{"message": "hi"}', {"Authorization": "Bearer t"}
        )
        response = browser.getresponse()
        assert (response.status, response.getheader("Content-Type")) == (200, "text/event-stream")
        first = response.read1(1024)
        assert first.startswith(b"event: chunk")  # before the function sent the rest
        handler.first_read.set()
        assert b"event: done" in first + response.read()
    with web(url, tmp_path) as browser:
        browser.request("POST", "/v1/facts:search?x=1", b"{}", {"Authorization": "Bearer t"})
        refused = browser.getresponse()
        assert (refused.status, json.loads(refused.read())["error"]["code"]) == (404, "not_found")
    turn, facts = handler.seen
    assert (turn["path"], turn["body"], turn["headers"]["Authorization"]) == (
        "/v1/chats/c1/messages",
        b'{"message": "hi"}',
        "Bearer t",
    )
    assert facts["path"] == "/v1/facts:search?x=1"


def test_an_oversized_or_unmeasured_body_is_refused_before_any_function(tmp_path: Path) -> None:
    for length in (str((1 << 20) + 1), "-5", "lots"):
        with web("http://127.0.0.1:1/", tmp_path) as browser:
            browser.putrequest("POST", "/v1/chats/c1/messages")
            browser.putheader("Content-Length", length)
            browser.endheaders()
            response = browser.getresponse()
            body = json.loads(response.read())
        assert (response.status, body["error"]["code"]) == (413, "payload_too_large"), length


def test_a_missing_function_is_a_503_with_the_products_error_shape(tmp_path: Path) -> None:
    with socket_free_port() as port, web(f"http://127.0.0.1:{port}/", tmp_path) as browser:
        browser.request("POST", "/v1/chats", b"{}")
        response = browser.getresponse()
        body = json.loads(response.read())
    assert (response.status, body["error"]["code"]) == (503, "dependency_unavailable")


@contextmanager
def socket_free_port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = int(server.server_address[1])
    server.server_close()  # nothing listens there now
    yield port


def _token(browser: HTTPConnection, body: bytes) -> tuple[int, dict[str, Any]]:
    browser.request("POST", "/dev/token", body, {"Content-Type": "application/json"})
    response = browser.getresponse()
    return response.status, json.loads(response.read())


def test_the_dev_token_is_minted_only_for_a_local_stack(tmp_path: Path) -> None:
    ensure_keys(tmp_path)
    with web("http://127.0.0.1:1/", tmp_path) as browser:
        status, body = _token(browser, b'{"user": "ada"}')
        assert status == 200
        keys = jwt.PyJWKSet.from_json(jwks_path(tmp_path, "user").read_text())
        claims = jwt.decode(
            body["token"], keys.keys[0].key, ["RS256"], audience=USER_AUDIENCE, issuer=USER_ISSUER
        )
        assert claims["sub"] == "ada"
        for bad in (b'{"user": "a/b"}', b'{"user": ""}', b"[1]", b"{not json", b'{"user": 7}'):
            assert _token(browser, bad)[0] == 400, bad
    with web("http://127.0.0.1:1/", tmp_path, env="prod") as browser:
        status, body = _token(browser, b'{"user": "ada"}')
        assert (status, body["error"]["code"]) == (404, "not_found")
