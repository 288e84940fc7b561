"""Faults injected into the real stack by pid, with traffic: each time the degraded mode
holds, full service comes back with no manual step, and nothing is duplicated.

Private instances where a fault would reach other tests (a Redis, a Firestore emulator, a
turn function of their own); PostgreSQL is the stack's, stopped and started again with
``scripts/stack up``, which waits for it. Waits are bounded and generous; nothing here is
timed (``bench.faults`` measures the times).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
import redis
from google.cloud import firestore

from scripts.stacklib import procs
from scripts.stacklib.profile import Profile
from shared.adapters.firestore_conversations import FirestoreConversationStore
from shared.config import Settings
from shared.conversation.phrases import phrase
from shared.services.ids import extraction_task_name, new_chat_id_for
from testkit.faults import PrivateFirestore, PrivateRedis, wait_until
from testkit.vertex_server import NO_LATENCY, Latency
from tests.e2e.conftest import Served, new_user, private_function, wait_for
from tests.e2e.snapshots import facts_of
from tests.e2e.test_background_work import internal_headers

pytestmark = [pytest.mark.e2e, pytest.mark.stack]
ROOT = Path(__file__).resolve().parents[2]
NOTE = phrase("memory_unavailable", "en")


def send(
    url: str, served: Served, user: str, text: str, cmid: str, chat: str | None = None
) -> httpx.Response:
    """A message to the turn function at ``url``, in ``chat`` or a chat made for it (in the
    Firestore the test's environment names: a private one, while the turn uses it)."""
    body = {"message": text, "client_message_id": cmid}
    chat = chat or chat_for(user, cmid)
    return httpx.post(
        url.rstrip("/") + f"/v1/chats/{chat}/messages",
        json=body,
        headers={"Authorization": f"Bearer {served.token(user)}"},
        timeout=90,
    )


def chat_for(user: str, request_id: str) -> str:
    """What ``POST /v1/chats?request_id=`` makes, in the environment's Firestore."""
    store = FirestoreConversationStore(firestore.Client(project=Settings().gcp_project))
    chat_id = new_chat_id_for(user, request_id)
    store.create_chat(user, chat_id, datetime.now(UTC))
    return chat_id


def turn_messages(db: firestore.Client, user: str, chat: str) -> list[tuple[str, str]]:
    found = db.collection(f"users/{user}/chats/{chat}/messages").order_by("created_at").stream()
    return [((s.to_dict() or {})["role"], (s.to_dict() or {})["text"]) for s in found]


# -- Redis paused, then resumed ---------------------------------------------------------------
def test_redis_paused_during_traffic_then_resumed(
    served: Served, db: firestore.Client, tmp_path: Path
) -> None:
    user = new_user()
    with PrivateRedis() as cache:
        env = {"REDIS_URL": cache.url, "REDIS_TIMEOUT_SECONDS": "0.5"}
        with private_function(served, "turn", env, log=tmp_path / "turn.log") as turn:
            chat = send(turn.url, served, user, "Hello", "r0").json()["chat_id"]
            cache.pause()
            try:
                during = [send(turn.url, served, user, f"Tide pools {n}?", f"r{n}", chat)
                          for n in range(1, 6)]  # fmt: skip
            finally:
                cache.resume()
            assert [r.status_code for r in during] == [200] * 5  # answered without Redis
            counted = redis.Redis.from_url(cache.url)

            before = {key: counted.get(key) for key in counted.scan_iter(match=f"*:rate:{user}:*")}

            def back() -> bool:  # the breaker closed and the turns count in Redis again
                cmid = f"r-after-{uuid.uuid4().hex[:6]}"
                assert send(turn.url, served, user, f"And {cmid}?", cmid, chat).status_code == 200
                return turn.log_lines("redis back: rate limiting counts in redis again") == 1

            assert wait_until(back, 60, interval=0.2)
            assert turn.log_lines("dependency back: circuit closed") == 1
            now = {key: counted.get(key) for key in counted.scan_iter(match=f"*:rate:{user}:*")}
            assert now != before
    said = turn_messages(db, user, chat)
    assert len(said) == len({(role, text) for role, text in said})  # nothing twice


# -- PostgreSQL stopped, then started again ---------------------------------------------------
def test_postgres_stopped_then_restarted(served: Served, db: firestore.Client) -> None:
    user = new_user()
    chat = send(served.turn_url, served, user, "Hello", "p0").json()["chat_id"]
    task = {
        "user_id": user, "chat_id": chat, "turn_id": f"t{uuid.uuid4().hex[:10]}",
        "message_id": "p-u", "text": "[facts] I like figs", "enqueued_at": "2099-01-01T00:00:00Z",
    }  # fmt: skip
    settings = Settings()
    headers = internal_headers(
        settings.extraction_url, settings.tasks_invoker_email, extraction_task_name(task["turn_id"])
    )
    with _outage() as stop:
        stop()
        greeting = send(served.turn_url, served, user, "Hi!", "p1", chat)
        asked = send(served.turn_url, served, user, "[ask] What do I like?", "p2", chat)
        simple = send(served.turn_url, served, user, "How are tides made?", "p3", chat)
        extraction = httpx.post(served.extraction_url, json=task, headers=headers, timeout=90)
        listed = served.memory(user, "GET", "/v1/facts")
    assert [greeting.status_code, asked.status_code, simple.status_code] == [200, 200, 200]
    assert asked.json()["reply"]["text"].endswith(NOTE)  # says it cannot remember
    assert NOTE not in simple.json()["reply"]["text"]  # needed no memory
    assert extraction.status_code == 503  # Cloud Tasks retries it later: nothing is lost
    assert (listed.status_code, listed.json()["error"]["code"]) == (503, "dependency_unavailable")

    again = wait_for(
        lambda: (
            (
                r := httpx.post(served.extraction_url, json=task, headers=headers, timeout=90)
            ).status_code
            == 200
            and r
        ),
        90,
    )  # the queue's retry, once PostgreSQL is back
    assert again.json()["status"] == "stored"
    assert facts_of(user) == [("I like figs", task["turn_id"])]
    after = wait_for(
        lambda: (
            (
                r := send(served.turn_url, served, user, "[ask] And now?", uuid.uuid4().hex, chat)
            ).status_code
            == 200
            and NOTE not in r.json()["reply"]["text"]
            and r
        ),
        90,
    )
    assert after.json()["reply"]["text"].startswith("You said:")


class _outage:
    """``stop()`` stops PostgreSQL; leaving the block starts it again and waits for it."""

    def __enter__(self) -> object:
        self._profile = Profile("test")
        return lambda: procs.stop(self._profile.pid_file("postgres"), signal.SIGINT)

    def __exit__(self, *exc: object) -> None:
        subprocess.run([str(ROOT / "scripts" / "stack"), "up", "--profile", "test"],
                       check=True, capture_output=True, timeout=300)  # fmt: skip


# -- Firestore unavailable, then back -----------------------------------------------------------
def test_firestore_paused_mid_turn_then_the_retry_completes_once(
    served: Served, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    user = new_user()
    served.model.latency = Latency(first_token_seconds=0.3, between_events_seconds=0.1)
    try:
        with PrivateFirestore() as store:
            env = {"FIRESTORE_EMULATOR_HOST": store.host, "FIRESTORE_DEADLINE_SECONDS": "2",
                   "TURN_LEASE_SECONDS": "4"}  # fmt: skip
            with private_function(served, "turn", env, log=tmp_path / "turn.log") as turn:
                monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", store.host)
                db = firestore.Client(project=Settings().gcp_project)
                long_text = "Tell me " + " ".join(f"w{n}" for n in range(20))
                result: dict[str, httpx.Response] = {}
                first = threading.Thread(target=lambda: result.setdefault(
                    "r", send(turn.url, served, user, long_text, "f1")))  # fmt: skip
                first.start()
                assert wait_until(lambda: db.document(f"users/{user}/turns/f1").get().exists, 60)
                store.pause()  # mid-turn: claimed, still writing its reply
                first.join(120)
                during = send(turn.url, served, user, "Hello", "f2", "c-during")
                store.resume()
                assert (result["r"].status_code, during.status_code) == (503, 503)
                retried = wait_for(
                    lambda: (
                        (r := send(turn.url, served, user, long_text, "f1")).status_code == 200
                        and r
                    ),
                    120,
                )  # 409 turn_in_progress until the failed attempt's lease ran out
                chat = retried.json()["chat_id"]
                assert turn_messages(db, user, chat) == [
                    ("user", long_text), ("assistant", retried.json()["reply"]["text"])
                ]  # fmt: skip
                store.restart()  # an emulator restart: empty, and the function gets it back
                back = wait_for(lambda: send(turn.url, served, user, "Hi", uuid.uuid4().hex)
                                .status_code == 200, 120)  # fmt: skip
                assert back
    finally:
        served.model.latency = NO_LATENCY


# -- the turn process killed mid-turn ---------------------------------------------------------
def test_turn_killed_mid_turn_then_retried_answers_once(
    served: Served, db: firestore.Client
) -> None:
    user, env = new_user(), {"TURN_LEASE_SECONDS": "4"}
    long_text = "Tell me " + " ".join(f"w{n}" for n in range(30))
    served.model.latency = Latency(first_token_seconds=0.3, between_events_seconds=0.1)
    try:
        with private_function(served, "turn", env) as doomed:
            body = {"message": long_text, "client_message_id": "k1", "stream": True}
            headers = {"Authorization": f"Bearer {served.token(user)}"}
            url = f"{doomed.url}/v1/chats/{chat_for(user, 'k1')}/messages"
            with httpx.stream("POST", url, json=body, headers=headers, timeout=60) as r:
                lines = r.iter_lines()
                assert any(line.startswith("event: chunk") for line in lines)  # mid-reply
                os.killpg(doomed.pid, signal.SIGKILL)
                with pytest.raises(httpx.HTTPError):
                    list(lines)
        with private_function(served, "turn", env) as fresh:
            retried = wait_for(
                lambda: (
                    (r := send(fresh.url, served, user, long_text, "k1")).status_code == 200 and r
                ),
                120,
            )
    finally:
        served.model.latency = NO_LATENCY
    chat = retried.json()["chat_id"]
    assert turn_messages(db, user, chat) == [
        ("user", long_text), ("assistant", retried.json()["reply"]["text"])
    ]  # fmt: skip


# -- storms of duplicate deliveries -----------------------------------------------------------
def test_the_same_extraction_task_delivered_twenty_times_at_once_stores_once(
    served: Served,
) -> None:
    user, turn_id = new_user(), f"t{uuid.uuid4().hex[:10]}"
    task = {
        "user_id": user, "chat_id": "c1", "turn_id": turn_id, "message_id": "m-u",
        "text": "[facts] I sail on Lake Thun", "enqueued_at": "2099-01-01T00:00:00Z",
    }  # fmt: skip
    settings = Settings()
    headers = internal_headers(
        settings.extraction_url, settings.tasks_invoker_email, extraction_task_name(turn_id)
    )
    gate = threading.Barrier(20)

    def deliver(_: int) -> tuple[int, str]:
        gate.wait()
        response = httpx.post(served.extraction_url, json=task, headers=headers, timeout=120)
        return response.status_code, response.json().get("status", "")

    with ThreadPoolExecutor(20) as pool:
        outcomes = list(pool.map(deliver, range(20)))
    assert sorted(outcomes) == sorted([(200, "stored")] + [(200, "duplicate")] * 19)
    assert facts_of(user) == [("I sail on Lake Thun", turn_id)]


def test_the_same_pubsub_message_pushed_twenty_times_at_once_runs_once(
    served: Served, db: firestore.Client
) -> None:
    import base64
    import json

    user = new_user()
    chat = send(served.turn_url, served, user, "Hello", "s0").json()["chat_id"]
    job = {"job_id": f"job-{uuid.uuid4().hex[:8]}", "user_id": user, "chat_id": chat,
           "turn_id": "t-storm", "agent": "research", "goal": "storm test",
           "created_at": "2099-01-01T00:00:00Z"}  # fmt: skip
    push = {
        "message": {"data": base64.b64encode(json.dumps(job).encode()).decode(),
                    "messageId": "storm-1", "attributes": {"job_id": job["job_id"]}},
        "subscription": "projects/local-project/subscriptions/agent-jobs-push",
    }  # fmt: skip
    settings = Settings()
    url = served.agents_url + "projects/local-project/topics/agent-jobs"
    headers = internal_headers(settings.agents_url, settings.agents_invoker_email)
    gate = threading.Barrier(20)

    def deliver(_: int) -> int:
        gate.wait()
        return httpx.post(url, json=push, headers=headers, timeout=120).status_code

    with ThreadPoolExecutor(20) as pool:
        codes = list(pool.map(deliver, range(20)))
    # A busy job (409) is redelivered later, and so is a claim that lost to the others'
    # transactions too often on a loaded emulator (503): Pub/Sub retries any non-2xx.
    assert set(codes) <= {200, 409, 503} and 200 in codes
    messages = db.collection(f"users/{user}/chats/{chat}/messages")
    results = wait_for(lambda: [m for m in messages.stream() if m.id.endswith("-result")])
    assert len(results) == 1
    again = httpx.post(url, json=push, headers=headers, timeout=120)  # a late redelivery
    assert again.status_code == 200
    assert len([m for m in messages.stream() if m.id.endswith("-result")]) == 1
