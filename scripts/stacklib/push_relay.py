"""Pub/Sub authenticated push, emulated: the emulator pushes here, this adds the OIDC token.

The Pub/Sub emulator pushes without credentials; real Pub/Sub signs a Google OIDC token for the
subscription's service account. This relay forwards each push unchanged (path, body, headers) to
the agents function with ``Authorization: Bearer <token>`` signed by the stack's internal key,
and answers with the function's status so that a non-2xx makes the emulator redeliver.

    python -m scripts.stacklib.push_relay --port P --target URL --email SA --state-dir DIR
"""

from __future__ import annotations

import argparse
import logging
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .profile import HOST
from .tokens import mint_internal_token

# Pub/Sub waits for a push response up to the ack deadline (the stack sets 600 s).
UPSTREAM_TIMEOUT = 600
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback target
_HOP_BY_HOP = {"host", "connection", "content-length", "authorization", "transfer-encoding"}

log = logging.getLogger("push-relay")


class Relay(BaseHTTPRequestHandler):
    server: RelayServer

    def do_GET(self) -> None:
        if self.path == "/healthz":
            self._answer(200, b"ok")
        else:
            self._answer(404, b"not found")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
        token = mint_internal_token(self.server.state_dir, self.server.audience, self.server.email)
        headers["Authorization"] = f"Bearer {token}"
        url = self.server.target.rstrip("/") + self.path
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with _OPENER.open(request, timeout=UPSTREAM_TIMEOUT) as response:
                status, payload = response.status, response.read()
        except urllib.error.HTTPError as exc:
            status, payload = exc.code, exc.read()
        except OSError as exc:  # agents function down or too slow: Pub/Sub should retry
            log.warning("push to %s failed: %s", url, exc)
            status, payload = 502, f"relay: {exc}".encode()
        log.info("push %s -> %s", url, status)
        self._answer(status, payload)

    def _answer(self, status: int, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        pass  # one line per push comes from do_POST instead


class RelayServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, target: str, email: str, state_dir: str) -> None:
        super().__init__((HOST, port), Relay)
        self.target = target
        self.audience = target  # Settings.agents_url: what the agents function expects
        self.email = email
        self.state_dir = state_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--target", required=True, help="the agents function's URL")
    parser.add_argument("--email", required=True, help="the push service account")
    parser.add_argument("--state-dir", required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    server = RelayServer(args.port, args.target, args.email, args.state_dir)
    log.info("relaying http://%s:%s -> %s", HOST, args.port, args.target)
    server.serve_forever()


if __name__ == "__main__":
    main()
