"""Email really sent, on the local stack: "email Carla that the meeting moved to 3pm",
approved once, arrives once at the stack's SMTP server (scripts/stacklib/mail_server.py)
with To, Subject, Reply-To and the Message-ID of the approval's key; a redelivered job sends
nothing more; the outbox record says sent."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import uuid
from typing import Any

import httpx
import pytest
from google.cloud import firestore

from scripts.stacklib.profile import PROJECT
from shared.config import Settings
from tests.e2e.conftest import Served, new_user, wait_for
from tests.e2e.test_agent_jobs import job_document
from tests.e2e.test_background_work import internal_headers

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


def received(to: str) -> list[dict[str, Any]]:
    """What the stack's SMTP server received for ``to`` (its page's JSON)."""
    page = httpx.get(os.environ["MAIL_WEB_URL"] + "messages", timeout=10).json()
    return [m for m in page["messages"] if to in m["envelope_to"]]


def test_an_approved_email_arrives_once_with_its_headers(
    served: Served, db: firestore.Client
) -> None:
    user = new_user()
    carla = f"carla{uuid.uuid4().hex[:8]}"
    me = f"{user}@example.net"
    patched = served.api("PATCH", "/v1/settings/assistant", user, {"email": me})
    assert patched.status_code == 200, patched.text
    body = {"message": f"[act] Email {carla} that the meeting moved to 3pm"}
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
    state = wait_for(lambda: (d := job_document(db, user, job_id)).get("status") == "done" and d)

    [record] = [d.to_dict() or {} for d in db.collection(f"users/{user}/outbox").stream()]
    assert (record["status"], record["relay_code"], record["provider"]) == ("sent", 250, "smtp")
    [mail] = received(f"{carla}@example.com")
    assert mail["to"] == f"{carla}@example.com"
    assert mail["subject"] == "The meeting moved to 3pm"
    assert mail["reply_to"] == me
    assert mail["from"].endswith("<assistant@assistant.localhost>")
    assert mail["message_id"] == record["message_id"]
    assert record["message_id"].startswith(f"<{_digest(record['idempotency_key'])[:40]}.")

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
    [again] = [d.to_dict() or {} for d in db.collection(f"users/{user}/outbox").stream()]
    assert again == record


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()
