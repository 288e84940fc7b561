"""Faults under traffic, measured: requests during each fault by status code, the time from
the dependency's recovery to full service, and duplicated messages (must be 0).

    .venv/bin/python -m bench.faults [--fault-seconds 10]

Needs ``scripts/stack up --profile test`` (and no e2e session serving its ports). A turn
function of its own (``scripts/serve.py``'s way) serves the traffic: four clients sending
turns to one chat each, one after another, through the whole run. Faults, each by pid:

- **redis**: a private ``redis-server`` paused (SIGSTOP) then resumed; recovered when the
  rate counter in Redis moves again;
- **postgres**: the stack's PostgreSQL stopped, then started by ``scripts/stack up``;
  recovered when a memory question is answered without the "cannot reach my memory" note;
- **firestore**: a private Firestore emulator paused, then resumed; recovered at the first
  200.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import redis
from google.cloud import firestore

from bench.load.model_server import TOKEN
from scripts import serve
from scripts.stacklib import procs
from scripts.stacklib.profile import Profile
from scripts.stacklib.tokens import mint_user_token
from shared.conversation.phrases import phrase
from testkit.faults import PrivateFirestore, PrivateRedis, free_port, wait_until
from testkit.stack_env import require_stack_env

ROOT = Path(__file__).resolve().parent.parent
STATE = serve.state_dir("test")
NOTE = phrase("memory_unavailable", "en")


@dataclass
class Traffic:
    """Clients sending turns until stopped; each answer's time, status and reply kept."""

    url: str
    answers: list[tuple[float, int, str]] = field(default_factory=list)
    chats: dict[str, str] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self, clients: int = 4) -> list[threading.Thread]:
        threads = [threading.Thread(target=self._client, daemon=True) for _ in range(clients)]
        for thread in threads:
            thread.start()
        return threads

    def stop(self, threads: list[threading.Thread]) -> None:
        self._stop.set()
        for thread in threads:
            thread.join(120)

    def _client(self) -> None:
        user = f"fault{uuid.uuid4().hex[:10]}"
        headers = {"Authorization": f"Bearer {mint_user_token(STATE, user, ttl=7200)}"}
        chat = None
        for n in range(100000):
            if self._stop.is_set():
                return
            text = "[ask] What do I like?" if n % 2 else f"Tell me about tides ({n})"
            body = {"message": text, "client_message_id": f"c{n}"}
            if chat:
                body["chat_id"] = chat
            try:
                response = httpx.post(self.url, json=body, headers=headers, timeout=60)
                status, reply = response.status_code, response.text
            except httpx.HTTPError:
                status, reply = 0, ""
            if status == 200 and chat is None:
                chat = response.json()["chat_id"]
                self.chats[user] = chat
            self.answers.append((time.monotonic(), status, reply))
            time.sleep(0.1)

    def codes(self, start: float, end: float) -> dict[int, int]:
        return dict(Counter(status for at, status, _ in self.answers if start <= at < end))

    def first_after(self, moment: float, good: Callable[[int, str], bool]) -> float | None:
        times = [at for at, status, reply in self.answers if at >= moment and good(status, reply)]
        return min(times) - moment if times else None


@contextmanager
def turn_function(model_url: str, env: dict[str, str]) -> Iterator[str]:
    port = free_port()
    full = {
        **serve.read_env("test"), "MODEL_PROVIDER": "vertex", "VERTEX_BASE_URL": model_url,
        "VERTEX_ACCESS_TOKEN": TOKEN, "RATE_LIMIT_PER_MINUTE": "100000", **env,
    }  # fmt: skip
    process = serve.spawn("turn", port, {**os.environ, **full}, subprocess.DEVNULL)
    try:
        if not serve.wait_ready(port, 120):
            raise SystemExit("the turn function did not start")
        yield f"http://127.0.0.1:{port}/"
    finally:
        process.terminate()
        process.wait(30)


def duplicated(db: firestore.Client, chats: dict[str, str]) -> int:
    found = 0
    for user, chat in chats.items():
        stored = db.collection(f"users/{user}/chats/{chat}/messages").stream()
        mine = Counter((s.to_dict() or {}).get("turn_id") for s in stored
                       if (s.to_dict() or {}).get("role") == "user")  # fmt: skip
        found += sum(n - 1 for n in mine.values() if n > 1)
    return found


Recovered = Callable[[Traffic, float], float | None]


def scenario(
    name: str,
    traffic: Traffic,
    fault_seconds: float,
    fault: tuple[Callable[[], None], Callable[[], None]],
    recovered: Recovered,
    firestore_host: str | None = None,
) -> None:
    """Traffic, then the fault for ``fault_seconds``, then the mend; prints the figures."""
    break_it, mend_it = fault
    threads = traffic.run()
    time.sleep(3)
    broke = time.monotonic()
    break_it()
    time.sleep(fault_seconds)
    mend_it()
    mended = time.monotonic()
    back = recovered(traffic, mended)
    time.sleep(5)
    traffic.stop(threads)
    during = traffic.codes(broke, mended)
    if firestore_host:
        os.environ["FIRESTORE_EMULATOR_HOST"] = firestore_host
    twice = duplicated(firestore.Client(project="local-project"), traffic.chats)
    recovery = f"{back:.2f} s" if back is not None else "not within 60 s"
    print(f"{name:<10} during the fault ({fault_seconds:.0f} s): {during}; full service "
          f"{recovery} after the dependency was back; duplicated messages: {twice}")  # fmt: skip


def answered(good: Callable[[int, str], bool]) -> Recovered:
    """Recovered at the first answer after the mend that ``good`` accepts."""

    def first(traffic: Traffic, mended: float) -> float | None:
        wait_until(lambda: traffic.first_after(mended, good) is not None, 60)
        return traffic.first_after(mended, good)

    return first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fault-seconds", type=float, default=10.0)
    args = parser.parse_args()
    require_stack_env()
    serving = ["-m", "bench.load.model_server", "--first-token-ms=50"]
    model = subprocess.Popen([sys.executable, *serving], stdout=subprocess.PIPE, text=True)
    try:
        url = (model.stdout.readline() if model.stdout else "").strip()
        _redis(url, args.fault_seconds)
        _postgres(url, args.fault_seconds)
        _firestore(url, args.fault_seconds)
    finally:
        model.terminate()
        model.wait(10)


def _redis(model_url: str, seconds: float) -> None:
    with PrivateRedis() as cache, turn_function(model_url, {"REDIS_URL": cache.url}) as url:
        counted = redis.Redis.from_url(cache.url)

        def total() -> int:
            return sum(int(counted.get(key) or 0) for key in counted.scan_iter(match="*:rate:*"))

        def counting_again(traffic: Traffic, mended: float) -> float | None:
            before = total()
            if not wait_until(lambda: total() > before, 60, interval=0.02):
                return None
            return time.monotonic() - mended

        fault = (cache.pause, cache.resume)
        scenario("redis", Traffic(url), seconds, fault, counting_again)


def _postgres(model_url: str, seconds: float) -> None:
    profile = Profile("test")

    def stop() -> None:
        procs.stop(profile.pid_file("postgres"), signal.SIGINT)

    def start() -> None:
        command = [str(ROOT / "scripts" / "stack"), "up", "--profile", "test"]
        subprocess.run(command, check=True, capture_output=True)

    def remembers(status: int, reply: str) -> bool:
        return status == 200 and "[ask]" in reply and NOTE not in reply

    with turn_function(model_url, {}) as url:
        scenario("postgres", Traffic(url), seconds, (stop, start), answered(remembers))


def _firestore(model_url: str, seconds: float) -> None:
    with PrivateFirestore() as store:
        env = {"FIRESTORE_EMULATOR_HOST": store.host, "FIRESTORE_DEADLINE_SECONDS": "2"}
        with turn_function(model_url, env) as url:
            fault = (store.pause, store.resume)
            ok = answered(lambda status, _: status == 200)
            scenario("firestore", Traffic(url), seconds, fault, ok, firestore_host=store.host)


if __name__ == "__main__":
    main()
