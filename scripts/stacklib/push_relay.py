"""Pub/Sub authenticated push, emulated: the emulator pushes here, this adds the OIDC token.

The Pub/Sub emulator pushes without credentials; real Pub/Sub signs a Google OIDC token for the
subscription's service account. This relay forwards each push unchanged (path, body, headers) to
the agents function with ``Authorization: Bearer <token>`` signed by the stack's internal key,
and answers with the function's status so that a non-2xx makes the emulator redeliver. With
``--keep FILE`` (the dev stack) it also keeps the messages not yet acknowledged across a
restart of the stack (``kept_messages``).

    python -m scripts.stacklib.push_relay --port P --target URL --email SA --state-dir DIR
        [--keep FILE --pubsub HOST:PORT --kept-subscription PATH ...]
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import kept_messages
from .profile import HOST
from .pubsub_setup import MAX_DELIVERY_ATTEMPTS
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
        pushed = kept_messages.pushed(self.path, body)
        if self.server.keeper is not None and pushed is not None:
            self.server.keeper.settle(pushed, acknowledged=200 <= status < 300)

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
        self.keeper: kept_messages.Keeper | None = None

    def target_listens(self) -> bool:
        parts = urllib.parse.urlsplit(self.target)
        with socket.create_connection((parts.hostname, parts.port or 80), timeout=1):
            return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--target", required=True, help="the agents function's URL")
    parser.add_argument("--email", required=True, help="the push service account")
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--keep", help="file the unacknowledged messages are kept in")
    parser.add_argument("--pubsub", help="the emulator's host:port (with --keep)")
    parser.add_argument(
        "--kept-subscription", action="append", default=[], help="a copy of a push subscription"
    )
    args = parser.parse_args()
    if args.keep and not args.pubsub:
        parser.error("--keep needs --pubsub")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    server = RelayServer(args.port, args.target, args.email, args.state_dir)
    if args.keep:
        os.environ["PUBSUB_EMULATOR_HOST"] = args.pubsub
        server.keeper = kept_messages.start(
            args.keep, args.kept_subscription, MAX_DELIVERY_ATTEMPTS, server.target_listens
        )
    log.info("relaying http://%s:%s -> %s", HOST, args.port, args.target)
    server.serve_forever()


if __name__ == "__main__":
    main()
