"""A reply waiting for the one slot stops a background generation at its next token: the
background caller is answered 503 (try again, nothing kept), the reply goes first."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest

from scripts.model_service.lanes import Lane
from scripts.model_service.service import Limits
from tests.unit.model_service.conftest import TEXT_MODEL, TOKEN, Running, ScriptedEngine, serving

URL = "/v1beta1/projects/p/locations/l/publishers/google/models/"
BACKGROUND = {"contents": [{"parts": [{"text": "extract"}]}], "labels": {"priority": "background"}}
REPLY = {"contents": [{"parts": [{"text": "hi"}]}]}


def post(running: Running, body: object) -> httpx.Response:
    return httpx.post(
        f"{running.url}{URL}{TEXT_MODEL}:generateContent",
        content=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
        timeout=10,
    )


def far() -> float:
    return time.monotonic() + 30


def background_then_reply(limits: Limits) -> tuple[httpx.Response, httpx.Response, Running]:
    """A long background generation, and a reply that arrives while it runs."""
    engine = ScriptedEngine(pieces=["tick "] * 100, seconds_per_piece=0.02)  # ~2 s alone
    answers: dict[str, httpx.Response] = {}
    with serving(engine, limits) as running:
        background = threading.Thread(
            target=lambda: answers.setdefault("background", post(running, BACKGROUND))
        )
        background.start()
        assert engine.started.wait(5)
        time.sleep(0.1)  # a few tokens in
        answers["reply"] = post(running, REPLY)
        background.join(10)
    return answers["background"], answers["reply"], running


def test_a_waiting_reply_preempts_a_background_generation() -> None:
    background, reply, running = background_then_reply(Limits())
    assert reply.status_code == 200
    assert background.status_code == 503
    assert background.json()["error"]["status"] == "UNAVAILABLE"
    assert "preempted" in background.json()["error"]["message"]
    assert [len(call.messages) for call in running.engine.calls] == [1, 1]  # nothing retried
    health = running.service.health()
    assert health["text_lane"]["preempted"] == 1
    assert health["finished"]["preempted"] == 1


def test_without_preemption_the_reply_waits_for_the_whole_generation() -> None:
    background, reply, running = background_then_reply(Limits(preempt=False))
    assert (background.status_code, reply.status_code) == (200, 200)
    assert background.json()["candidates"][0]["content"]["parts"][0]["text"].count("tick") == 100
    assert running.service.health()["text_lane"]["preempted"] == 0


@pytest.mark.parametrize(
    ("background", "preemptible", "preempt", "asked"),
    [
        (True, True, True, True),
        (True, False, True, False),  # a stream: its events are out, it cannot be refused
        (False, True, True, False),  # a reply is never cut short
        (True, True, False, False),  # preemption off
    ],
)
def test_who_is_asked_to_stop(
    background: bool, preemptible: bool, preempt: bool, asked: bool
) -> None:
    lane = Lane(slots=1, preempt=preempt)
    admitted = threading.Event()

    def reply() -> None:
        with lane.slot(far()):
            admitted.set()

    with lane.slot(far(), background, preemptible) as hold:
        waiter = threading.Thread(target=reply)
        waiter.start()
        while lane.stats().waiting < 1:
            time.sleep(0.001)
        assert hold.preempted is asked
        assert not admitted.is_set()  # the holder decides when to give the slot back
    waiter.join(5)
    assert admitted.is_set()
    assert lane.stats().preempted == int(asked)


def test_one_holder_is_asked_per_waiting_reply() -> None:
    lane = Lane(slots=2, background_slots=2, preempt=True)

    def reply() -> None:
        with lane.slot(far()):
            pass

    with lane.slot(far(), True, True) as first, lane.slot(far(), True, True) as second:
        waiter = threading.Thread(target=reply)
        waiter.start()
        while lane.stats().waiting < 1:
            time.sleep(0.001)
        assert (first.preempted, second.preempted) == (False, True)  # the latest: least lost
    waiter.join(5)
