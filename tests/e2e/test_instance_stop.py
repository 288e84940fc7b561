"""A turn instance stops promptly when Cloud Run stops it, and starts with a store down.

Cloud Run sends SIGTERM to the function's process (gunicorn's master), which passes it to its
worker and waits for it up to its graceful timeout (30 s) before killing it. The understanding
tier is on here: MiniLM (onnxruntime) is loaded in the master before the worker is forked, the
case where the worker used to abort at exit or hang until it was killed (onnxruntime's
telemetry thread, ``shared/adapters/bert_graph.py``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from scripts import serve
from testkit.faults import free_port
from tests.e2e.conftest import PROFILE, Served, new_user, served_model_env

pytestmark = [pytest.mark.e2e, pytest.mark.stack]

GRACEFUL_TIMEOUT = 30.0  # gunicorn's default: a worker still running then is killed
PROMPT = 10.0  # a clean stop takes 2-6 s here (the worker polls its sockets each second)
# What gunicorn's master logs when its worker did not end by itself with status 0.
UNCLEAN = ("was sent SIG", "exited with code", "terminate called")


@dataclass
class Instance:
    process: subprocess.Popen[bytes]  # gunicorn's master; it leads the worker's group
    url: str


@contextmanager
def turn_instance(served: Served, log: Path, **env: str) -> Iterator[Instance]:
    port = free_port()
    full_env = {
        **os.environ,
        **serve.read_env(PROFILE),
        **served_model_env(served),
        "UNDERSTANDING_TIER": "true",
        "LOG_LEVEL": "INFO",
        "GUNICORN_LOG_LEVEL": "info",  # so a worker's abnormal end is in the log
        "PYTHONUNBUFFERED": "1",
        **env,
    }
    with open(log, "ab") as sink:
        process = serve.spawn("turn", port, full_env, sink)
    try:
        assert serve.wait_ready(port, 120), "the turn function did not start"
        yield Instance(process, f"http://127.0.0.1:{port}")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def stop(instance: Instance) -> float:
    """SIGTERM to the master only, as Cloud Run sends it; seconds until it exited."""
    started = time.monotonic()
    instance.process.send_signal(signal.SIGTERM)
    try:
        instance.process.wait(GRACEFUL_TIMEOUT + 10)
    except subprocess.TimeoutExpired:
        pytest.fail("the turn function did not stop at all")
    return time.monotonic() - started


def say(served: Served, instance: Instance, user: str, message: str) -> int:
    chat = served.new_chat(user)
    url = f"{instance.url}/v1/chats/{chat}/messages"
    body = {"message": message, "client_message_id": f"m{time.monotonic_ns()}"}
    return served.post(url, user, body).status_code


def test_a_turn_instance_stops_well_within_the_graceful_timeout(
    served: Served, tmp_path: Path
) -> None:
    log = tmp_path / "turn.log"
    with turn_instance(served, log) as instance:
        assert say(served, instance, new_user(), "Can you help me write a short poem?") == 200
        seconds = stop(instance)
    text = log.read_text()
    assert text.count("worker warmed up") == 1  # after the fork, before it accepted
    assert "Worker exiting" in text  # the worker ended itself, not the graceful timeout
    assert not [line for line in text.splitlines() if any(m in line for m in UNCLEAN)]
    assert seconds < PROMPT, f"stopped after {seconds:.1f} s"


def test_an_instance_whose_redis_is_down_at_start_starts_answers_and_stops(
    served: Served, tmp_path: Path
) -> None:
    """docs/reliability.md: without Redis turns are answered (context from the stores, rate
    limits per instance). The worker does not try Redis again at start: the outage costs
    its connect timeout once, in the master."""
    log = tmp_path / "turn.log"
    down = {"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0", "REDIS_TIMEOUT_SECONDS": "0.5"}
    with turn_instance(served, log, **down) as instance:
        assert say(served, instance, new_user(), "Hello there") == 200
        assert say(served, instance, new_user(), "Can you help me write a short poem?") == 200
        seconds = stop(instance)
    text = log.read_text()
    assert text.count("worker warmed up") == 1
    assert text.count("redis did not answer at start") == 1  # in the master only
    assert not [line for line in text.splitlines() if any(m in line for m in UNCLEAN)]
    assert seconds < PROMPT, f"stopped after {seconds:.1f} s"
