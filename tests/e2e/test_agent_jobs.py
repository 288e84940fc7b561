"""Agent jobs through the real Pub/Sub emulator, pushed (via the relay) to the served agents
function: a job of three subtasks with dependencies, a redelivery that changes nothing, a
job the dev stack kept across a restart and published again that changes nothing either,
and a poison message that reaches the dead-letter topic after 5 deliveries."""

from __future__ import annotations

import base64
import json
import os
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.cloud import firestore, pubsub_v1

from scripts.stacklib import kept_messages
from scripts.stacklib.profile import DEAD_LETTER_SUBSCRIPTION, PROJECT
from scripts.stacklib.pubsub_setup import MAX_DELIVERY_ATTEMPTS
from scripts.stacklib.push_relay import RelayServer
from shared.adapters.pubsub import PubSubPublisher
from shared.config import Settings
from tests.e2e.conftest import Served, private_function, wait_for
from tests.e2e.test_background_work import internal_headers, new_turn

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


def job_document(db: firestore.Client, user: str, job_id: str) -> dict[str, Any]:
    data = db.document(f"users/{user}/jobs/{job_id}").get().to_dict() or {}
    return dict(data.get("state", {}))


def chat_messages(db: firestore.Client, user: str, chat_id: str) -> dict[str, str]:
    messages = db.collection(f"users/{user}/chats/{chat_id}/messages").stream()
    return {m.id: (m.to_dict() or {}).get("text", "") for m in messages}


def test_a_team_job_runs_its_subtasks_in_dependency_order(
    served: Served, db: firestore.Client
) -> None:
    user, reply = new_turn(served, "[team] Rome in May")
    assert reply["reply"]["kind"] == "progress", reply
    job_id = f"{reply['turn_id']}-job0"
    result = wait_for(lambda: chat_messages(db, user, reply["chat_id"]).get(f"{job_id}-result"))
    assert result == "Result for: compare Rome in May (using s1, s2)"  # got both results
    messages = chat_messages(db, user, reply["chat_id"])
    assert {f"{job_id}-s1", f"{job_id}-s2", f"{job_id}-s3"} <= set(messages)  # progress
    listed = served.messages(user, reply["chat_id"]).json()["messages"]
    kinds = {m["id"]: m["kind"] for m in listed}
    assert [kinds[f"{job_id}-{s}"] for s in ("s1", "s2", "s3", "result")] == [
        "progress", "progress", "progress", "result",
    ]  # fmt: skip
    assert kinds[f"{reply['turn_id']}-a"] == "progress"  # the reply that started it
    # The result is posted just before the job's last save: wait for that save.
    state = wait_for(lambda: (d := job_document(db, user, job_id))["status"] == "done" and d)
    assert state["job"]["job_type"] == "research"
    assert [(s["subtask"]["id"], s["status"]) for s in state["subtasks"]] == [
        ("s1", "done"), ("s2", "done"), ("s3", "done"),
    ]  # fmt: skip
    assert state["subtasks"][2]["subtask"]["depends_on"] == ["s1", "s2"]

    # Pub/Sub delivers the same job again (a new message id): claimed already, nothing runs.
    published = dict(state["job"])
    settings = Settings()
    push = {
        "message": {
            "data": base64.b64encode(json.dumps(published).encode()).decode(),
            "messageId": f"redelivered-{uuid.uuid4().hex[:6]}",
            "attributes": {"job_id": job_id},
        },
        "subscription": f"projects/{PROJECT}/subscriptions/agent-jobs-push",
    }
    url = served.agents_url + f"projects/{PROJECT}/topics/agent-jobs"
    headers = internal_headers(settings.agents_url, settings.agents_invoker_email)
    for _ in range(2):
        assert httpx.post(url, json=push, headers=headers, timeout=30).status_code == 200
    assert chat_messages(db, user, reply["chat_id"]) == messages
    assert job_document(db, user, job_id) == state
    # The user is told once, through the reminders queue's notify task (issue 25).
    told = wait_for(lambda: served.api("GET", "/v1/notifications", user).json()["notifications"])
    assert [(n["kind"], n["target"]) for n in told] == [
        ("job_done", {"chat_id": reply["chat_id"], "job_id": job_id})
    ]


@contextmanager
def relay_keeping(target: str, keeper: kept_messages.Keeper) -> Iterator[str]:
    """The dev stack's relay (with its keeper) in front of ``target``, pushed to from a
    topic of its own: its topic path."""
    settings = Settings()
    relay = RelayServer(0, target, settings.agents_invoker_email, os.environ["STACK_STATE_DIR"])
    relay.audience, relay.keeper = settings.agents_url, keeper  # the URL the function is told
    threading.Thread(target=relay.serve_forever, daemon=True).start()
    topic = f"projects/{PROJECT}/topics/kept-{uuid.uuid4().hex[:8]}"
    push = {"push_endpoint": f"http://127.0.0.1:{relay.server_address[1]}/{topic}"}
    publisher, subscriber = pubsub_v1.PublisherClient(), pubsub_v1.SubscriberClient()
    subscription = topic.replace("/topics/", "/subscriptions/")
    try:
        publisher.create_topic(name=topic)
        subscriber.create_subscription(name=subscription, topic=topic, push_config=push)
        yield topic
    finally:
        subscriber.delete_subscription(subscription=subscription)
        publisher.delete_topic(topic=topic)
        subscriber.close()
        relay.shutdown()
        relay.server_close()


def test_a_kept_job_published_again_after_a_restart_runs_once(
    served: Served, db: firestore.Client, tmp_path: Path
) -> None:
    user, reply = new_turn(served, "[team] Porto in October")
    job_id = f"{reply['turn_id']}-job0"
    state = wait_for(lambda: (d := job_document(db, user, job_id)).get("status") == "done" and d)
    messages = chat_messages(db, user, reply["chat_id"])

    # The stack was killed after the function acknowledged the job and before the relay's
    # file said so: the next start publishes it again, as a new message.
    log = tmp_path / "agents.log"
    with private_function(served, "agents", log=log) as agents:
        keeper = kept_messages.Keeper(MAX_DELIVERY_ATTEMPTS)
        with relay_keeping(f"{agents.url}/", keeper) as topic:
            data = json.dumps(state["job"]).encode()
            kept = [kept_messages.Message(topic, "1", data, {"job_id": job_id})]
            publisher = kept_messages.emulator_publisher(os.environ["PUBSUB_EMULATOR_HOST"])
            assert kept_messages.republish(keeper, publisher, kept) == 1
            publisher.transport.close()
            # Pushed through the relay, answered 2xx: claimed already, a duplicate.
            assert wait_for(lambda: agents.log_lines("job not run") == 1)
    assert chat_messages(db, user, reply["chat_id"]) == messages
    assert job_document(db, user, job_id) == state


def test_a_poison_job_goes_to_the_dead_letter_topic_after_five_deliveries(
    served: Served, db: firestore.Client
) -> None:
    settings = Settings()
    user, job_id = f"u{uuid.uuid4().hex[:12]}", f"poison-{uuid.uuid4().hex[:8]}"
    job = {
        "job_id": job_id,
        "user_id": user,
        "chat_id": "c-none",
        "turn_id": "t-none",
        "agent": "research",
        "goal": "[poison] never answered",
        "created_at": "2099-01-01T00:00:00Z",  # never too old
    }
    publisher = PubSubPublisher(pubsub_v1.PublisherClient(), settings.gcp_project)
    publisher.publish(settings.agents_topic, json.dumps(job).encode(), {"job_id": job_id})

    subscriber = pubsub_v1.SubscriberClient()
    dead_letters = subscriber.subscription_path(PROJECT, DEAD_LETTER_SUBSCRIPTION)

    def dead_lettered() -> bool:
        response = subscriber.pull(
            request={"subscription": dead_letters, "max_messages": 50}, timeout=10
        )
        ours = [m for m in response.received_messages
                if m.message.attributes.get("job_id") == job_id]  # fmt: skip
        if ours:
            subscriber.acknowledge(
                request={"subscription": dead_letters, "ack_ids": [m.ack_id for m in ours]}
            )
        return bool(ours)

    try:
        assert wait_for(dead_lettered, seconds=150)
    finally:
        subscriber.close()
    state = job_document(db, user, job_id)
    assert state["status"] == "stalled"  # kept, resumable if an operator republishes it
    assert state["deliveries"] == 5
    assert state["subtasks"][0]["status"] == "pending"
