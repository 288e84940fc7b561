"""Email really sent, on the local stack: "email Carla that the meeting moved to 3pm",
approved once, arrives once at the stack's SMTP server (scripts/stacklib/mail_server.py)
with To, Subject, Reply-To and the Message-ID of the approval's key; a redelivered job sends
nothing more; the outbox record says sent. A relay that refuses or goes silent after the
data leaves its record (failed, unknown) and the user is told in the chat."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from google.cloud import firestore

from scripts.stacklib.profile import PROJECT
from shared.config import Settings
from tests.e2e.conftest import Served, new_user, wait_for
from tests.e2e.test_agent_jobs import chat_messages, job_document
from tests.e2e.test_background_work import internal_headers

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


def received(to: str) -> list[dict[str, Any]]:
    """What the stack's SMTP server received for ``to`` (its page's JSON)."""
    page = httpx.get(os.environ["MAIL_WEB_URL"] + "messages", timeout=10).json()
    return [m for m in page["messages"] if to in m["envelope_to"]]


@pytest.fixture
def relay() -> Iterator[Any]:
    """Switches the stack's SMTP server to a fault; back to accepting afterwards."""

    def behave(behaviour: str) -> None:
        answer = httpx.post(os.environ["MAIL_WEB_URL"] + "behaviour", content=behaviour)
        assert answer.status_code == 200

    yield behave
    behave("accept")


def email_approved(served: Served, db: firestore.Client, user: str, who: str) -> dict[str, Any]:
    """The user asks to email ``who``, approves the plan and the send; the finished job's
    state."""
    me = f"{user}@example.net"
    patched = served.api("PATCH", "/v1/settings/assistant", user, {"email": me})
    assert patched.status_code == 200, patched.text
    body = {"message": f"[act] Email {who} that the meeting moved to 3pm"}
    asked = served.say(user, {**body, "client_message_id": uuid.uuid4().hex}).json()
    assert asked["interrupt"]["kind"] == "approval"  # the plan first
    chat_id = asked["chat_id"]
    approved = served.answer(user, chat_id, asked["interrupt"]["id"], "approve")
    [job_id] = approved.json()["jobs"]

    def send_question() -> dict[str, Any] | None:
        question = served.messages(user, chat_id).json()["question"]
        return question if question and question["id"].startswith(job_id) else None

    question = wait_for(send_question)
    assert served.answer(user, chat_id, question["id"], "yes").status_code == 200
    state: dict[str, Any] = wait_for(
        lambda: (d := job_document(db, user, job_id)).get("status") == "done" and d
    )
    return state


def outbox(db: firestore.Client, user: str) -> list[dict[str, Any]]:
    return [d.to_dict() or {} for d in db.collection(f"users/{user}/outbox").stream()]


def test_an_approved_email_arrives_once_with_its_headers(
    served: Served, db: firestore.Client
) -> None:
    user, carla = new_user(), f"carla{uuid.uuid4().hex[:8]}"
    state = email_approved(served, db, user, carla)

    [record] = outbox(db, user)
    assert (record["status"], record["relay_code"], record["provider"]) == ("sent", 250, "smtp")
    [mail] = received(f"{carla}@example.com")
    assert mail["to"] == f"{carla}@example.com"
    assert mail["subject"] == "The meeting moved to 3pm"
    assert mail["reply_to"] == f"{user}@example.net"
    assert mail["from"].endswith("<assistant@assistant.localhost>")
    assert mail["message_id"] == record["message_id"]
    digest = hashlib.sha256(record["idempotency_key"].encode()).hexdigest()
    assert record["message_id"].startswith(f"<{digest[:40]}.")

    # Pub/Sub delivers the job again: nothing more goes out, the record is unchanged.
    settings = Settings()
    push = {
        "message": {
            "data": base64.b64encode(json.dumps(state["job"]).encode()).decode(),
            "messageId": f"redelivered-{uuid.uuid4().hex[:6]}",
        },
        "subscription": f"projects/{PROJECT}/subscriptions/agent-jobs-push",
    }
    url = served.agents_url + f"projects/{PROJECT}/topics/agent-jobs"
    headers = internal_headers(settings.agents_url, settings.agents_invoker_email)
    assert httpx.post(url, json=push, headers=headers, timeout=30).status_code == 200
    assert len(received(f"{carla}@example.com")) == 1
    assert outbox(db, user) == [record]


@pytest.mark.parametrize(
    ("fault", "status", "told"),
    [
        ("refuse", "failed", "was not sent. The mail server said: 5.1.1 mailbox unavailable"),
        ("silent", "unknown", "I cannot tell whether your email"),
    ],
)
def test_a_relay_fault_is_recorded_and_told_to_the_user(
    served: Served, db: firestore.Client, relay: Any, fault: str, status: str, told: str
) -> None:
    relay(fault)
    user, carla = new_user(), f"carla{uuid.uuid4().hex[:8]}"
    state = email_approved(served, db, user, carla)
    [record] = outbox(db, user)
    assert record["status"] == status and record["settled_at"] is not None
    assert received(f"{carla}@example.com") == []
    notice = chat_messages(db, user, state["job"]["chat_id"])[f"email-{record['message_id'][1:33]}"]
    assert told in notice and f"to {carla}@example.com" in notice
