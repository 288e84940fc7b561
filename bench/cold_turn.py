"""The first real turn on a fresh turn function, next to a warm one (``bench.cold_start``).

Each run spawns the turn function (functions-framework, as gen2 runs it) against the test
stack, with the understanding tier on and the fake Vertex endpoint (``testkit``) as model at
0 ms, and times, from the spawn: its first HTTP answer (ready), then the first ``/v1`` turn
over HTTP (``POST /v1/chats/{chat}/messages``, a message the tier leaves to the model), then
warm turns on the same instance, then stops it (SIGTERM) and times its exit. Chats are made
first, untimed, on a resume function spawned once (``POST /v1/chats``), as clients make them.
The user is a returning one: their first turn ever (a new data key, their context cached) is
made first on another instance, so each first turn pays only what is new to the instance (the
user's key read and unwrapped once per instance, about 3-5 ms). The target: the first turn
within 1.5x of a warm one (p50 over runs).
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
    stop_ms: float  # SIGTERM to the whole function (gunicorn's master) -> it exited


@dataclass
class Instance:
    url: str
    ready_s: float  # spawn -> first HTTP answer
    stop_s: float = 0.0  # SIGTERM -> exit, set when it has stopped


@contextmanager
def function(name: str, env: dict[str, str]) -> Iterator[Instance]:
    """A fresh instance of function ``name``, stopped as Cloud Run stops one (SIGTERM)."""
    port = free_port()
    started = time.perf_counter()
    process = serve.spawn(name, port, env, subprocess.DEVNULL)
    instance = None
    try:
        if not serve.wait_ready(port, seconds=120):
            raise TimeoutError(f"{name} did not answer on port {port}")
        instance = Instance(f"http://127.0.0.1:{port}", time.perf_counter() - started)
        yield instance
    finally:
        stopping = time.perf_counter()
        process.terminate()
        process.wait(60)  # gunicorn's graceful timeout is 30 s
        if instance is not None:
            instance.stop_s = time.perf_counter() - stopping


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
        with function("resume", env) as resume:
            client = Client(resume.url)
            # Untimed, on an instance of its own: the user's first turn ever creates their
            # data key and caches their context, which no instance's warm-up can do for them.
            with function("turn", env) as known:
                client.turn(known.url)
            for _ in range(runs):
                with function("turn", env) as turn:
                    first = client.turn(turn.url)
                    warm = statistics.median(client.turn(turn.url) for _ in range(WARM_TURNS))
                ms = [turn.ready_s * 1000, first * 1000, warm * 1000, turn.stop_s * 1000]
                results.append(ColdTurn(*ms))
    finally:
        model.stop()
    return results


def report(results: list[ColdTurn]) -> None:
    print(
        f"\nturn function, first real /v1 turn on a fresh instance ({len(results)} runs; "
        f"model: fake Vertex at 0 ms, understanding tier on)"
    )
    warm_label = f"warm p50 of {WARM_TURNS}"
    print(
        f"{'run':<8}{'ready':>10}{'first turn':>12}{warm_label:>16}{'first/warm':>12}{'stop':>10}"
    )
    for n, r in enumerate(results, 1):
        ratio = r.first_ms / r.warm_ms
        print(
            f"{n:<8}{r.ready_ms:>7.0f} ms{r.first_ms:>9.0f} ms{r.warm_ms:>13.0f} ms"
            f"{ratio:>11.2f}x{r.stop_ms:>7.0f} ms"
        )
    first = statistics.median(r.first_ms for r in results)
    warm = statistics.median(r.warm_ms for r in results)
    stop = max(r.stop_ms for r in results)
    verdict = "met" if first <= 1.5 * warm else "not met"
    print(f"median first / median warm: {first / warm:.2f}x (target <= 1.5x: {verdict})")
    print(f"slowest stop on SIGTERM: {stop:.0f} ms (gunicorn's graceful timeout: 30 s)")
