"""The first real turn on a fresh turn function, next to a warm one (``bench.cold_start``).

Each run spawns the turn function (functions-framework, as gen2 runs it) against the test
stack, with the understanding tier on and the fake Vertex endpoint (``testkit``) as model at
0 ms, and times, from the spawn: its first HTTP answer (ready), then the first ``/v1`` turn
over HTTP (``POST /v1/chats/{chat}/messages``, a message the tier leaves to the model), then
warm turns on the same instance. Chats are made first, untimed, on a resume function spawned
once (``POST /v1/chats``), as clients make them. The target: the first turn within 1.5x of a
warm one (p50 over runs).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx

from scripts import serve
from scripts.stacklib.tokens import mint_user_token
from testkit.faults import free_port
from testkit.model_rules import reply_for
from testkit.vertex_server import FakeVertexServer

PROFILE = "test"
MESSAGE = "Can you help me write a short poem about autumn?"  # the tier leaves it open
WARM_TURNS = 5


@dataclass(frozen=True)
class ColdTurn:
    ready_ms: float  # spawn -> first HTTP answer
    first_ms: float  # the first turn's request -> response
    warm_ms: float  # median of the warm turns after it


@contextmanager
def function(name: str, env: dict[str, str]) -> Iterator[tuple[str, float]]:
    """A fresh instance of function ``name``: its URL and the seconds until it answered."""
    port = free_port()
    started = time.perf_counter()
    process = serve.spawn(name, port, env, subprocess.DEVNULL)
    try:
        if not serve.wait_ready(port, seconds=120):
            raise TimeoutError(f"{name} did not answer on port {port}")
        yield f"http://127.0.0.1:{port}", time.perf_counter() - started
    finally:
        process.terminate()
        process.wait(15)


class Client:
    def __init__(self, resume_url: str) -> None:
        self.resume_url, self.user = resume_url, f"bench-cold-{uuid.uuid4().hex[:8]}"
        self.headers = {
            "Authorization": f"Bearer {mint_user_token(serve.state_dir(PROFILE), self.user)}"
        }

    def chat(self) -> str:
        made = httpx.post(f"{self.resume_url}/v1/chats", json={}, headers=self.headers, timeout=60)
        made.raise_for_status()
        return str(made.json()["id"])

    def turn(self, turn_url: str) -> float:
        """Seconds for one whole turn on a chat made first (untimed)."""
        path = f"/v1/chats/{self.chat()}/messages"
        body = {"message": MESSAGE, "client_message_id": uuid.uuid4().hex}
        started = time.perf_counter()
        sent = httpx.post(turn_url + path, json=body, headers=self.headers, timeout=120)
        elapsed = time.perf_counter() - started
        if sent.status_code != 200 or sent.json()["reply"]["kind"] != "text":
            raise RuntimeError(f"the turn failed: {sent.status_code} {sent.text[:300]}")
        return elapsed


def measure(runs: int) -> list[ColdTurn]:
    model = FakeVertexServer(token="bench-cold-token", fallback=reply_for).start()
    env = {
        **os.environ,
        **serve.read_env(PROFILE),
        "MODEL_PROVIDER": "vertex",
        "VERTEX_BASE_URL": model.base_url,
        "VERTEX_ACCESS_TOKEN": model.token,
        "UNDERSTANDING_TIER": "true",
        "LOG_LEVEL": "WARNING",
    }
    results = []
    try:
        with function("resume", env) as (resume_url, _):
            client = Client(resume_url)
            for _ in range(runs):
                with function("turn", env) as (turn_url, ready):
                    first = client.turn(turn_url)
                    warm = statistics.median(client.turn(turn_url) for _ in range(WARM_TURNS))
                results.append(ColdTurn(ready * 1000, first * 1000, warm * 1000))
    finally:
        model.stop()
    return results


def report(results: list[ColdTurn]) -> None:
    ready = statistics.median(r.ready_ms for r in results)
    first = statistics.median(r.first_ms for r in results)
    warm = statistics.median(r.warm_ms for r in results)
    print(
        f"\nturn function, first real /v1 turn on a fresh instance ({len(results)} runs, "
        f"median; model: fake Vertex at 0 ms, understanding tier on)"
    )
    print(f"{'ready (first answer)':<28}{ready:>10.0f} ms")
    print(f"{'first turn':<28}{first:>10.0f} ms")
    print(f"{'warm turn (p50 of ' + str(WARM_TURNS) + ')':<28}{warm:>10.0f} ms")
    verdict = "met" if first <= 1.5 * warm else "not met"
    print(f"first / warm: {first / warm:.2f}x (target <= 1.5x: {verdict})")
