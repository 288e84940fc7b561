"""The Global Supervisor over HTTP, with the production Vertex client against the fake
endpoint: entity-first disambiguation (ask, answer by the next message, the deferred
extraction attributes the fact to the person chosen), turn metadata in Firestore, and the
fallback when a node fails."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest
from google.cloud import firestore

from shared.adapters.keyring_local import LocalKek
from shared.adapters.postgres import Database
from shared.adapters.postgres_contacts import PostgresContactStore
from shared.adapters.postgres_facts import PostgresFactStore
from shared.adapters.postgres_keyring import PostgresKeyRing
from shared.config import Settings
from shared.models.memory import FactFilter, Person
from tests.e2e.conftest import Served, wait_for
from tests.e2e.snapshots import firestore_paths, postgres_counts

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


def _stores() -> tuple[Database, PostgresContactStore, PostgresFactStore]:
    settings = Settings()
    assert settings.local_kek_file, "the stack's env file must set LOCAL_KEK_FILE"
    db = Database(settings)
    keyring = PostgresKeyRing(db, LocalKek(settings.local_kek_file))
    return db, PostgresContactStore(db, keyring), PostgresFactStore(db, keyring)


def seed_namesakes(user: str) -> dict[str, str]:
    db, contacts, _ = _stores()
    try:
        ids = {}
        for role in ("colleague", "sibling"):
            person = Person(
                id=str(uuid.uuid4()), user_id=user, display_name="Thomas", role_to_user=role
            )
            contacts.add_person(person)
            ids[role] = person.id
        return ids
    finally:
        db.close()


def facts_by_subject(user: str) -> list[tuple[str, str | None, str | None]]:
    db, _, facts = _stores()
    try:
        found = facts.list_facts(user, FactFilter(limit=100))
    finally:
        db.close()
    return [(f.text, f.subject_entity_id, f.source.turn_id) for f in found]


def stream_turn(served: Served, user: str, message: str, chat_id: str | None = None) -> list:
    body = {"message": message, "client_message_id": uuid.uuid4().hex, "stream": True}
    chat = chat_id or served.new_chat(user, body["client_message_id"])
    url = f"{served.origin_url}/v1/chats/{chat}/messages"
    headers = {"Authorization": f"Bearer {served.token(user)}"}
    events: list[tuple[str, Any]] = []
    with httpx.stream("POST", url, json=body, headers=headers, timeout=60) as r:
        assert r.status_code == 200
        name = ""
        for line in r.iter_lines():
            if line.startswith("event:"):
                name = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                events.append((name, json.loads(line.split(":", 1)[1])))
    return events


def turn_record(db: firestore.Client, user: str, turn_id: str) -> dict[str, Any]:
    turns = db.collection("users").document(user).collection("turns")
    [doc] = [d for d in turns.stream() if (d.to_dict() or {}).get("turn_id") == turn_id]
    return doc.to_dict() or {}


def test_an_ambiguous_name_is_asked_first_and_the_fact_lands_on_the_chosen_person(
    served: Served, db: firestore.Client
) -> None:
    user = f"u{uuid.uuid4().hex[:12]}"
    ids = seed_namesakes(user)
    asked = stream_turn(served, user, "[facts] [ask] @Thomas moved to Bern; what does he like?")
    name, closing = asked[-1]
    assert name == "interrupt"
    interrupt = closing["interrupt"]
    assert interrupt["kind"] == "disambiguation"
    options = [o["id"] for o in interrupt["options"]]
    assert set(options) == {ids["colleague"], ids["sibling"], "someone_else"}
    assert closing["reply"]["kind"] == "question"
    first = turn_record(db, user, closing["turn_id"])
    assert first["metadata"]["interrupt_kind"] == "disambiguation"
    assert first["metadata"]["extraction_enqueued"] is False  # who is meant comes first

    choice = str(options.index(ids["sibling"]) + 1)
    answered = stream_turn(served, user, choice, chat_id=closing["chat_id"])
    assert answered[-1][0] == "done"
    assert answered[-1][1]["reply"]["text"].startswith("You said: [facts] [ask] @Thomas")
    second = turn_record(db, user, answered[-1][1]["turn_id"])
    nodes = [run["node"] for run in second["metadata"]["nodes"]]
    assert "resolve_disambiguation" in nodes and "classify" not in nodes

    stored = wait_for(lambda: facts_by_subject(user))
    assert stored == [
        ("Thomas moved to Bern; what does he like?", ids["sibling"], closing["turn_id"])
    ]
    chat = db.collection("users").document(user).collection("chats").document(closing["chat_id"])
    assert "pending" not in (chat.get().to_dict() or {})


def test_a_greeting_runs_four_nodes_and_no_model(served: Served, db: firestore.Client) -> None:
    user = f"u{uuid.uuid4().hex[:12]}"
    before = len(served.model.requests)
    events = stream_turn(served, user, "Hello!")
    assert events[-1][0] == "done"
    assert len(served.model.requests) == before
    record = turn_record(db, user, events[-1][1]["turn_id"])
    assert record["metadata"]["fast_path"] is True
    assert [run["node"] for run in record["metadata"]["nodes"]] == [
        "session_init", "hitl_handler", "classify", "greeting_text",
    ]  # fmt: skip


def test_a_failing_node_answers_with_a_recorded_fallback(
    served: Served, db: firestore.Client
) -> None:
    user = f"u{uuid.uuid4().hex[:12]}"
    events = stream_turn(served, user, "[complex] [badplan] Organise everything")
    name, closing = events[-1]
    assert name == "done" and closing["reply"]["kind"] == "fallback"
    assert closing["reply"]["text"].startswith("Sorry")
    record = turn_record(db, user, closing["turn_id"])
    assert record["metadata"]["outcome"] == "failed"
    assert record["metadata"]["failed_node"] == "global_planner"
    assert record["metadata"]["jobs_published"] == 0


def test_an_interrupt_is_answered_once_through_resume(served: Served, db: firestore.Client) -> None:
    user = f"u{uuid.uuid4().hex[:12]}"
    ids = seed_namesakes(user)
    _, asked = stream_turn(served, user, "[facts] [ask] @Thomas moved to Bern")[-1]
    answer = (user, asked["chat_id"], asked["interrupt"]["id"], ids["colleague"])
    response = served.answer(*answer)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["chat_id"] == asked["chat_id"] and body["interrupt"] is None
    assert body["reply"]["text"].startswith("You said: [facts] [ask] @Thomas")
    stored = wait_for(lambda: facts_by_subject(user))
    assert [subject for _, subject, _ in stored] == [ids["colleague"]]

    again = served.answer(*answer)
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "interrupt_not_pending"


def test_resume_streams_and_refuses_an_answer_that_picks_nothing(served: Served) -> None:
    user = f"u{uuid.uuid4().hex[:12]}"
    seed_namesakes(user)
    _, asked = stream_turn(served, user, "[ask] What does @Thomas like?")[-1]
    question = (user, asked["chat_id"], asked["interrupt"]["id"])
    refused = served.answer(*question, "what a day")
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "invalid_request"
    streamed = served.answer(*question, "the second one", headers={"Accept": "text/event-stream"})
    assert streamed.status_code == 200
    assert streamed.headers["content-type"].startswith("text/event-stream")
    assert "event: chunk" in streamed.text and "event: done" in streamed.text


ANSWER = "/v1/chats/{chat}/questions/{id}:answer"
RESUME_REFUSALS = {  # case -> (path, body, status, code)
    "malformed json": (ANSWER, b'{"answer": ', 400, "invalid_json"),
    "not an object": (ANSWER, b'["1"]', 400, "invalid_json"),
    "missing answer": (ANSWER, b"{}", 400, "invalid_request"),
    "unknown field": (ANSWER, b'{"answer": "1", "user_id": "bob"}', 400, "invalid_request"),
    "a number for the answer": (ANSWER, b'{"answer": 1}', 400, "invalid_request"),
    "an answer that picks nothing": (ANSWER, b'{"answer": "what a day"}', 400, "invalid_request"),
    "answer too long": (ANSWER, b'{"answer": "' + b"1" * 8001 + b'"}', 400, "message_too_long"),
    "body too large": (ANSWER, b'{"answer": "' + b"1" * 70000 + b'"}', 413, "payload_too_large"),
    "another interrupt": (
        "/v1/chats/{chat}/questions/other-q:answer",
        b'{"answer": "1"}',
        409,
        "interrupt_not_pending",
    ),
    "a chat that does not exist": (
        "/v1/chats/nochat/questions/{id}:answer",
        b'{"answer": "1"}',
        404,
        "not_found",
    ),
}


def test_bad_answers_are_refused_and_change_nothing(served: Served, db: firestore.Client) -> None:
    user = f"u{uuid.uuid4().hex[:12]}"
    seed_namesakes(user)
    _, asked = stream_turn(served, user, "[ask] What does @Thomas like?")[-1]
    chat, interrupt_id = asked["chat_id"], asked["interrupt"]["id"]
    before = (firestore_paths(db, user), postgres_counts())
    for case, (path, body, status, code) in RESUME_REFUSALS.items():
        response = httpx.post(
            served.origin_url + path.format(chat=chat, id=interrupt_id),
            content=body,
            headers={
                "Authorization": f"Bearer {served.token(user)}",
                "Content-Type": "application/json",
            },
            timeout=30,
        )
        assert (response.status_code, response.json()["error"]["code"]) == (status, code), case
    stranger = served.answer(f"u{uuid.uuid4().hex[:12]}", chat, interrupt_id, "1")
    assert (stranger.status_code, stranger.json()["error"]["code"]) == (404, "not_found")
    unsigned = served.answer(None, chat, interrupt_id, "1")
    assert (unsigned.status_code, unsigned.json()["error"]["code"]) == (401, "unauthenticated")
    assert (firestore_paths(db, user), postgres_counts()) == before  # nothing stored changed

    first, second = (served.answer(user, chat, interrupt_id, "1") for _ in range(2))
    assert first.status_code == 200  # the question was still open for the real answer
    assert (second.status_code, second.json()["error"]["code"]) == (409, "interrupt_not_pending")
