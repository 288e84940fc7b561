"""Turns through the served functions: JSON, streaming, replay, restarts, isolation."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest
from google.cloud import firestore

from tests.e2e.conftest import Served, refused

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


def user() -> str:
    return f"u{uuid.uuid4().hex[:12]}"


def turn(served: Served, who: str, message: str, chat_id: str | None = None) -> dict:
    body = {"message": message, "client_message_id": uuid.uuid4().hex}
    response = served.say(who, {**body, "chat_id": chat_id} if chat_id else body)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_chat_of_several_turns_survives_a_restart(served: Served, db: firestore.Client) -> None:
    alice = user()
    first = turn(served, alice, "Hello!")
    assert first["interrupt"] is None and first["reply"]["kind"] == "text"
    chat = first["chat_id"]
    second = turn(served, alice, "What can you do?", chat)
    assert second["reply"]["text"] == "You said: What can you do?"
    served.restart()
    third = turn(served, alice, "And after a restart?", chat)
    assert third["chat_id"] == chat
    last_request = [r for r in served.model.requests if r.rpc == "streamGenerateContent"][-1]
    history = [p["text"] for c in last_request.body["contents"] for p in c["parts"]]
    assert history[:4] == [
        "Hello!",
        first["reply"]["text"],
        "What can you do?",
        second["reply"]["text"],
    ]
    messages = db.collection(f"users/{alice}/chats/{chat}/messages").stream()
    assert len(list(messages)) == 6


def test_streaming_sends_chunks_then_done(served: Served) -> None:
    alice = user()
    url = f"{served.origin_url}/v1/chats/{served.new_chat(alice)}/messages"
    body = {"message": "Tell me something", "client_message_id": "s1", "stream": True}
    headers = {"Authorization": f"Bearer {served.token(alice)}"}
    events = []
    with httpx.stream("POST", url, json=body, headers=headers, timeout=60) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        name = None
        for line in r.iter_lines():
            if line.startswith("event:"):
                name = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                events.append((name, json.loads(line.split(":", 1)[1])))
    names = [n for n, _ in events]
    assert names.count("chunk") > 1 and names[-1] == "done"
    text = "".join(d["text"] for n, d in events if n == "chunk")
    assert text == events[-1][1]["reply"]["text"] == "You said: Tell me something"


def test_accept_header_also_streams(served: Served) -> None:
    alice = user()
    response = httpx.post(
        f"{served.origin_url}/v1/chats/{served.new_chat(alice)}/messages",
        json={"message": "Hi", "client_message_id": "a1"},
        headers={"Authorization": f"Bearer {served.token(alice)}", "Accept": "text/event-stream"},
        timeout=60,
    )
    assert response.headers["content-type"].startswith("text/event-stream")
    assert "event: done" in response.text


def test_a_repeated_client_message_id_returns_the_first_answer(
    served: Served, db: firestore.Client
) -> None:
    alice = user()
    body = {"message": "Remember this once", "client_message_id": "dup-1"}
    first = served.say(alice, body).json()
    calls = len(served.model.requests)
    again = served.say(alice, body).json()
    assert again == first
    assert len(served.model.requests) == calls  # nothing ran the second time
    messages = db.collection(f"users/{alice}/chats/{first['chat_id']}/messages").stream()
    assert len(list(messages)) == 2


def test_another_users_chat_is_404_for_turn_and_resume(served: Served) -> None:
    alice, bob = user(), user()
    chat = turn(served, alice, "Hello")["chat_id"]
    stolen = served.say(bob, {"message": "hi", "client_message_id": "b1", "chat_id": chat})
    assert stolen.status_code == 404 and stolen.json()["error"]["code"] == "not_found"
    missing = served.say(bob, {"message": "hi", "client_message_id": "b2", "chat_id": "nosuchchat"})
    assert refused(missing) == (404, "not_found")
    assert stolen.json() == missing.json()  # indistinguishable from a chat that does not exist
    assert served.answer(bob, chat, "i1", "1").json() == missing.json()
    assert served.messages(bob, chat).json() == served.messages(bob, "nosuchchat").json()
    assert refused(served.messages(bob, chat)) == (404, "not_found")
    for path in (f"/v1/chats/{chat}", f"/v1/chats/{chat}/messages"):
        assert refused(served.api("GET", path, bob)) == (404, "not_found"), path
    renamed = served.api("PATCH", f"/v1/chats/{chat}", bob, {"title": "mine"})
    assert refused(renamed) == (404, "not_found")
    own = served.api("GET", f"/v1/chats/{chat}", alice).json()
    assert own["title"] == "" and own["message_count"] == 2  # "Hello" names nothing


def test_resume_without_a_pending_interrupt_is_409(served: Served) -> None:
    alice = user()
    chat = turn(served, alice, "Hello")["chat_id"]
    response = served.answer(alice, chat, "i1", "1")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "interrupt_not_pending"
