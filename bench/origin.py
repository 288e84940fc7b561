"""What the one origin costs: the same ``/v1`` requests through ``scripts/web_serve.py`` and
straight to the function that serves them, interleaved, in one run.

The five functions are served on the test profile's ports against the fake Vertex endpoint
(``testkit/vertex_server.py``, answering at once), as the e2e suite serves them, so what is
measured is HTTP, the proxy and the functions. Printed per request kind: p50 and p95 of each
way, and the origin's added p50 in ms and as a ratio.

    .venv/bin/python -m bench.origin [--requests 60]

Needs ``scripts/stack up --profile test`` and the test profile's function ports free.
"""

from __future__ import annotations

import argparse
import time
import uuid
from collections.abc import Callable

import httpx

from bench.turn_report import pct
from scripts import serve
from scripts.stacklib import tokens
from scripts.stacklib.profile import Profile
from testkit.model_rules import reply_for
from testkit.vertex_server import FakeVertexServer

PROFILE = "test"
Send = Callable[[httpx.Client, str], httpx.Response]


def _kinds(chat: str) -> dict[str, tuple[str, Send]]:
    """Request kind -> (the function serving it, how to send it to a base URL)."""
    messages = f"/v1/chats/{chat}/messages"

    def greeting(client: httpx.Client, base: str) -> httpx.Response:
        body = {"message": "Hi!", "client_message_id": uuid.uuid4().hex}
        return client.post(base + messages, json=body)

    return {
        "turn (greeting)": ("turn", greeting),
        "list messages": ("turn", lambda c, base: c.get(base + messages)),
        "list chats": ("resume", lambda c, base: c.get(base + "/v1/chats")),
        "list facts": ("memory", lambda c, base: c.get(base + "/v1/facts")),
    }


def _timed(send: Send, client: httpx.Client, base: str) -> float:
    started = time.perf_counter()
    response = send(client, base)
    elapsed = time.perf_counter() - started
    if response.status_code != 200:
        raise SystemExit(f"{base}: {response.status_code} {response.text[:300]}")
    return elapsed * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=60)
    count = parser.parse_args().requests
    profile = Profile(PROFILE)
    model = FakeVertexServer(token="bench-static-token", fallback=reply_for).start()
    extra = {
        "MODEL_PROVIDER": "vertex",
        "VERTEX_BASE_URL": model.base_url,
        "VERTEX_ACCESS_TOKEN": model.token,
        "UNDERSTANDING_TIER": "false",
        "RATE_LIMIT_PER_MINUTE": "100000",
        "LOG_LEVEL": "WARNING",
    }
    serve.down(PROFILE)
    serve.up(PROFILE, extra_env=extra)
    try:
        user = f"bench-origin-{uuid.uuid4().hex[:8]}"
        token = tokens.mint_user_token(profile.state, user, ttl=3600)
        origin = profile.url("web").rstrip("/")
        with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
            chat = client.post(origin + "/v1/chats", json={}).json()["id"]
            print(f"{count} requests each way, interleaved; ms")
            print(f"{'request':<18} {'origin p50':>10} {'p95':>7} {'direct p50':>11} {'p95':>7}"
                  f" {'added p50':>10} {'ratio':>6}")  # fmt: skip
            for label, (function, send) in _kinds(chat).items():
                direct_url = profile.url(function).rstrip("/")
                for _ in range(5):  # warm both ways
                    _timed(send, client, origin)
                    _timed(send, client, direct_url)
                via, direct = [], []
                for _ in range(count):
                    via.append(_timed(send, client, origin))
                    direct.append(_timed(send, client, direct_url))
                added = pct(via, 50) - pct(direct, 50)
                print(
                    f"{label:<18} {pct(via, 50):>10.1f} {pct(via, 95):>7.1f}"
                    f" {pct(direct, 50):>11.1f} {pct(direct, 95):>7.1f} {added:>10.1f}"
                    f" {pct(via, 50) / pct(direct, 50):>6.2f}"
                )
    finally:
        serve.down(PROFILE)
        model.stop()


if __name__ == "__main__":
    main()
