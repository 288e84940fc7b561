"""Cloud Tasks and Pub/Sub unreachable: the turn is still answered and recorded, its
extraction and agent job wait in its outbox, and the scheduled drain (resume's
``/outbox/drain``, as Cloud Scheduler calls it) hands them off once: one fact, one result."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from urllib.parse import urljoin

import httpx
import pytest
from google.cloud import firestore

from shared.config import Settings
from tests.e2e.conftest import PrivateFunction, Served, free_port, private_function, wait_for
from tests.e2e.snapshots import facts_of
from tests.e2e.test_background_work import internal_headers

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


@pytest.fixture
def turn_without_queues(served: Served) -> Iterator[PrivateFunction]:
    nowhere = {
        "CLOUD_TASKS_EMULATOR_HOST": f"127.0.0.1:{free_port()}",
        "PUBSUB_EMULATOR_HOST": f"127.0.0.1:{free_port()}",
    }
    with private_function(served, "turn", nowhere) as fn:
        yield fn


def drain(served: Served) -> dict[str, int]:
    settings = Settings()
    url = urljoin(served.resume_url, "outbox/drain")
    headers = internal_headers(url, settings.tasks_invoker_email)
    response = httpx.post(url, json={}, headers=headers, timeout=60)
    assert response.status_code == 200, response.text
    body: dict[str, int] = response.json()
    return body


def test_handoffs_wait_in_the_outbox_and_are_sent_once(
    served: Served, turn_without_queues: PrivateFunction, db: firestore.Client
) -> None:
    user = f"u{uuid.uuid4().hex[:12]}"
    body = {"message": "[complex] [facts] I keep bees in Thun", "client_message_id": "q1"}
    chat = served.new_chat(user)
    url = f"{turn_without_queues.url}/v1/chats/{chat}/messages"
    response = served.post(url, user, body)
    assert response.status_code == 200, response.text
    reply = response.json()
    assert reply["reply"]["kind"] == "progress" and len(reply["jobs"]) == 1
    turn = db.document(f"users/{user}/turns/q1").get().to_dict() or {}
    assert turn["metadata"]["handoffs_unsent"] == 2
    assert [h["kind"] for h in turn["outbox"]] == ["task", "message"]

    report = drain(served)
    assert report["sent"] >= 2
    assert wait_for(lambda: facts_of(user)) == [("I keep bees in Thun", reply["turn_id"])]
    messages = db.collection(f"users/{user}/chats/{reply['chat_id']}/messages")
    wait_for(lambda: [m for m in messages.stream() if m.id.endswith("-result")])

    drain(served)  # nothing left of this turn: nothing sent twice
    assert "outbox" not in (db.document(f"users/{user}/turns/q1").get().to_dict() or {})
    results = [m for m in messages.stream() if m.id.endswith("-result")]
    assert len(results) == 1 and facts_of(user) == [("I keep bees in Thun", reply["turn_id"])]
