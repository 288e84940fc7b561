"""Background work over the real queues: extraction via Cloud Tasks, agent jobs via Pub/Sub.

Both paths deliver at least once; these tests deliver the same work again and check that
nothing is stored twice.
"""

from __future__ import annotations

import base64
import json
import uuid

import httpx
import pytest
from google.cloud import firestore

from scripts.stacklib.tokens import mint_internal_token
from shared.adapters.cloud_tasks import CloudTasksTaskQueue, build_tasks_client
from shared.config import Settings
from shared.ports import QueuedTask
from shared.services.ids import extraction_task_name
from tests.e2e.conftest import STATE, Served, wait_for
from tests.e2e.snapshots import facts_of, postgres_counts, postgres_key_rows

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


def internal_headers(audience: str, email: str, task_name: str = "") -> dict[str, str]:
    headers = {"Authorization": f"Bearer {mint_internal_token(STATE, audience, email)}"}
    if task_name:
        headers["X-CloudTasks-TaskName"] = task_name
    return headers


def new_turn(served: Served, message: str) -> tuple[str, dict]:
    user = f"u{uuid.uuid4().hex[:12]}"
    response = served.say(user, {"message": message, "client_message_id": uuid.uuid4().hex})
    assert response.status_code == 200, response.text
    return user, response.json()


def test_extraction_reaches_postgres_once_even_when_delivered_again(served: Served) -> None:
    user, reply = new_turn(served, "[facts] I moved to Basel in June")
    turn_id = reply["turn_id"]
    facts = wait_for(lambda: facts_of(user))
    assert facts == [("I moved to Basel in June", turn_id)]

    settings = Settings()
    tasks = CloudTasksTaskQueue(
        build_tasks_client(settings),
        settings.gcp_project,
        settings.tasks_location,
        settings.tasks_invoker_email,
    )
    task = QueuedTask(
        queue="extraction",
        url=settings.extraction_url,
        name=extraction_task_name(turn_id),
        body=b"{}",
    )
    assert tasks.enqueue(task) is False  # Cloud Tasks refuses the name a second time

    # A redelivery of the same task, as Cloud Tasks sends it, is recognised and writes nothing.
    payload = {
        "user_id": user,
        "chat_id": reply["chat_id"],
        "turn_id": turn_id,
        "message_id": f"{turn_id}-u",
        "text": "[facts] I moved to Basel in June",
        "resolved_entities": [],
        "has_preferences": False,
        "enqueued_at": "2026-11-21T12:00:00Z",
    }
    again = httpx.post(
        served.extraction_url,
        json=payload,
        timeout=30,
        headers=internal_headers(
            settings.extraction_url, settings.tasks_invoker_email, extraction_task_name(turn_id)
        ),
    )
    assert again.status_code == 200 and again.json()["status"] == "duplicate"
    assert facts_of(user) == facts


def test_agent_job_result_arrives_once_through_pubsub_push(
    served: Served, db: firestore.Client
) -> None:
    user, reply = new_turn(served, "[complex] Summarise my week")
    assert reply["reply"]["kind"] == "progress"
    messages = db.collection(f"users/{user}/chats/{reply['chat_id']}/messages")
    results = wait_for(lambda: [m for m in messages.stream() if m.id.endswith("-result")])
    assert results[0].to_dict()["text"] == "Result for: Summarise my week"  # the planned goal

    # Pub/Sub redelivers with the same message id: the job is already claimed.
    settings = Settings()
    job = {
        "job_id": f"{reply['turn_id']}-job0",
        "user_id": user,
        "chat_id": reply["chat_id"],
        "turn_id": reply["turn_id"],
        "agent": "research",
        "goal": "again",
        "created_at": "2099-01-01T00:00:00Z",
    }
    push = {
        "message": {
            "data": base64.b64encode(json.dumps(job).encode()).decode(),
            "messageId": "redelivered-1",
            "attributes": {"job_id": job["job_id"]},
        },
        "subscription": "projects/local-project/subscriptions/agent-jobs-push",
    }
    url = served.agents_url + "projects/local-project/topics/agent-jobs"
    headers = internal_headers(settings.agents_url, settings.agents_invoker_email)
    for _ in range(2):
        assert httpx.post(url, json=push, headers=headers, timeout=30).status_code == 200
    assert len(list(messages.stream())) == 3  # user, progress notice, one result


@pytest.mark.parametrize("who", ["nobody", "user", "wrong-service-account"])
def test_internal_functions_refuse_other_callers(served: Served, who: str) -> None:
    settings = Settings()
    headers = {
        "nobody": {},
        "user": {"Authorization": f"Bearer {served.token('alice')}"},
        "wrong-service-account": internal_headers(
            settings.extraction_url, "intruder@evil.iam.gserviceaccount.com"
        ),
    }[who]
    for url in (served.extraction_url, served.agents_url + "projects/p/topics/t"):
        response = httpx.post(
            url,
            json={"message": {"data": "", "messageId": "1"}, "subscription": "s"},
            headers=headers,
            timeout=30,
        )
        assert response.status_code == 401, (url, response.text)
        assert response.json()["error"]["code"] == "unauthenticated"


def test_malformed_deliveries_are_acknowledged_and_store_nothing(
    served: Served, db: firestore.Client
) -> None:
    """A payload that can never succeed is logged and answered 2xx, so the queue stops."""
    settings = Settings()
    before = postgres_counts()
    tasks_headers = internal_headers(
        settings.extraction_url, settings.tasks_invoker_email, "extract-bogus"
    )
    answer_of_nobody = (  # an answer's task that names no chosen person
        b'{"user_id": "u1", "chat_id": "c1", "turn_id": "t1", "message_id": "m1", "text": "hi",'
        b' "enqueued_at": "2026-11-26T08:00:00Z", "settles": "Anna"}'
    )
    bodies = (b"{not json", b'{"user_id": "u1"}', b"[]", b"x" * 70000, answer_of_nobody)
    for body in bodies:
        response = httpx.post(served.extraction_url, content=body, headers=tasks_headers,
                              timeout=30)  # fmt: skip
        assert response.status_code == 200, response.text
        permanent = ("invalid_event", "invalid_json", "invalid_request", "payload_too_large")
        assert response.json()["error"]["code"] in permanent
    push_headers = internal_headers(settings.agents_url, settings.agents_invoker_email)
    url = served.agents_url + "projects/local-project/topics/agent-jobs"
    for data in ("!!!", base64.b64encode(b'{"job_id": "x"}').decode()):
        push = {"message": {"data": data, "messageId": f"bad-{data[:4]}"},
                "subscription": "projects/local-project/subscriptions/agent-jobs-push"}  # fmt: skip
        assert httpx.post(url, json=push, headers=push_headers, timeout=30).status_code == 200
    assert postgres_counts() == before


def test_an_extraction_queued_before_the_account_was_erased_brings_nothing_back(
    served: Served,
) -> None:
    user, reply = new_turn(served, "Hello!")
    deleted = served.memory(user, "DELETE", "/v1/account", confirm="true")
    assert deleted.status_code == 200, deleted.text
    settings = Settings()
    late = {
        "user_id": user,
        "chat_id": reply["chat_id"],
        "turn_id": reply["turn_id"],
        "message_id": f"{reply['turn_id']}-u",
        "text": "[facts] I live in Basel",
        "enqueued_at": "2026-01-01T00:00:00Z",  # queued long before the erasure
    }
    name = extraction_task_name(reply["turn_id"])
    answer = httpx.post(
        served.extraction_url,
        json=late,
        timeout=30,
        headers=internal_headers(settings.extraction_url, settings.tasks_invoker_email, name),
    )
    assert answer.status_code == 200 and answer.json()["status"] == "erased"
    assert facts_of(user) == []
    assert postgres_key_rows(user) == 0  # not even a new data key
