"""What a client sees when the model fails, over HTTP against the faithful fake of Vertex (it
refuses an empty text part, a retired model, ... as Vertex does): a clear reply, status 200,
never an empty stored message, and a chat that goes on working."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import pytest
from google.cloud import firestore

from tests.e2e.conftest import Served, new_user, private_function, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


def stored_texts(db: firestore.Client, user: str, chat: str) -> list[tuple[str, str]]:
    found = db.collection(f"users/{user}/chats/{chat}/messages").order_by("created_at").stream()
    return [(d["role"], d["text"]) for d in (snap.to_dict() or {} for snap in found)]


def turn(
    served: Served, user: str, chat: str, text: str, cmid: str, **extra: str
) -> httpx.Response:
    body = {"message": text, "client_message_id": cmid, "chat_id": chat, **extra}
    return served.say(user, body)


def test_a_reply_stopped_before_its_first_word_leaves_the_chat_working(
    served: Served, db: firestore.Client
) -> None:
    user = new_user()
    first = served.say(user, {"message": "Hello", "client_message_id": "c0"})
    chat = first.json()["chat_id"]
    answers: dict[str, httpx.Response] = {}
    late = threading.Thread(
        target=lambda: answers.update(late=turn(served, user, chat, "[late] Tell me more", "c1"))
    )
    late.start()
    # stopped while its classification is still being answered: the reply never starts
    wait_for(lambda: any("[late]" in str(r.body) for r in served.model.requests), 20)
    stopping = turn(served, user, chat, "Stop, this instead", "c2", multitask_strategy="interrupt")
    late.join(30)
    after = turn(served, user, chat, "And one more thing", "c3")

    replies = [answers["late"], stopping, after]
    assert [r.status_code for r in replies] == [200, 200, 200], [r.text for r in replies]
    assert answers["late"].json()["reply"] == {"text": "", "kind": "interrupted"}
    assert [r.json()["reply"]["kind"] for r in (stopping, after)] == ["text", "text"]
    texts = stored_texts(db, user, chat)
    assert all(text.strip() for _, text in texts), texts
    assert ("user", "[late] Tell me more") in texts and texts[-1][1].startswith("You said: And")


def test_a_reply_the_model_declines_is_a_clear_reply_stored_in_full(
    served: Served, db: firestore.Client
) -> None:
    user = new_user()
    answer = served.say(user, {"message": "[unsafe] Something", "client_message_id": "c1"})

    assert answer.status_code == 200
    reply = answer.json()["reply"]
    assert reply["kind"] == "fallback" and reply["text"].startswith("I can't help with that")
    chat = answer.json()["chat_id"]
    assert stored_texts(db, user, chat)[-1] == ("assistant", reply["text"])
    again = turn(served, user, chat, "Fine, hello then", "c2")
    assert (again.status_code, again.json()["reply"]["kind"]) == (200, "text")


def test_a_retired_model_is_an_operator_error_and_the_user_gets_the_fallback(
    served: Served, tmp_path: Path
) -> None:
    log, user = tmp_path / "turn.log", new_user()
    chat = served.new_chat(user, "c1")
    with private_function(served, "turn", {"VERTEX_MODEL": "gemini-2.5-flash"}, log) as turn_fn:
        answer = served.post(
            f"{turn_fn.url}/v1/chats/{chat}/messages",
            user,
            {"message": "What can you do?", "client_message_id": "c1"},
        )
        time.sleep(0.2)  # the log line is flushed before the answer; let the file catch up

    assert answer.status_code == 200
    assert answer.json()["reply"]["kind"] == "fallback"
    written = log.read_text()
    assert "gemini-2.5-flash retired on 2026-10-16" in written
    assert '"severity": "ERROR"' in written or "ERROR" in written
