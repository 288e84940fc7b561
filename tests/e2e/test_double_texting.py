"""Double texting over HTTP, with the model as slow as a real one (300 ms to the first
token, 50 ms between tokens): messages sent at once to one chat are answered one after the
other, in the order they reached the chat, each with the earlier ones in its history, and
no message, reply or handoff is lost or doubled. ``reject`` and ``interrupt`` on request."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from google.cloud import firestore

from testkit.vertex_server import NO_LATENCY, Latency
from tests.e2e.conftest import Served, new_user, wait_for
from tests.e2e.snapshots import facts_of

pytestmark = [pytest.mark.e2e, pytest.mark.stack]

REALISTIC = Latency(first_token_seconds=0.3, between_events_seconds=0.05)


@pytest.fixture
def slow_model(served: Served) -> Iterator[Served]:
    served.model.latency = REALISTIC
    yield served
    served.model.latency = NO_LATENCY


def start_chat(served: Served, user: str) -> str:
    first = served.say(user, {"message": "Hello", "client_message_id": "c0"})
    assert first.status_code == 200, first.text
    chat_id: str = first.json()["chat_id"]
    return chat_id


def stored_messages(db: firestore.Client, user: str, chat: str) -> list[dict[str, str]]:
    found = db.collection(f"users/{user}/chats/{chat}/messages").order_by("created_at").stream()
    return [snap.to_dict() or {} for snap in found]


def test_three_messages_at_once_give_three_ordered_replies_each_seeing_the_last(
    slow_model: Served, db: firestore.Client
) -> None:
    served, user = slow_model, new_user()
    chat = start_chat(served, user)
    texts = [f"[facts] My note number {n} is about {word}" for n, word in
             ((1, "apples"), (2, "boats"), (3, "clouds"))]  # fmt: skip
    gate = threading.Barrier(3)

    def send(n: int) -> httpx.Response:
        gate.wait()
        body = {"message": texts[n], "client_message_id": f"c{n + 1}", "chat_id": chat}
        return served.say(user, body)

    before = len(served.model.requests)
    with ThreadPoolExecutor(3) as pool:
        responses = list(pool.map(send, range(3)))
    assert [r.status_code for r in responses] == [200, 200, 200], [r.text for r in responses]

    arrival = {
        texts[n]: (db.document(f"users/{user}/turns/c{n + 1}").get().to_dict() or {})["arrival"]
        for n in range(3)
    }
    in_order = sorted(texts, key=arrival.__getitem__)
    assert sorted(arrival.values()) == [2, 3, 4]  # the greeting arrived first
    said = [m["text"] for m in stored_messages(db, user, chat)]
    assert said[2:] == [text for t in in_order for text in (t, f"You said: {t}")]

    streamed = [r for r in served.model.requests[before:] if r.rpc == "streamGenerateContent"]
    for request in streamed:
        history = [json.dumps(c) for c in request.body["contents"][:-1]]
        asked = "".join(p.get("text", "") for p in request.body["contents"][-1]["parts"])
        earlier = in_order[: in_order.index(asked)]
        assert [t for t in in_order if any(t in h for h in history)] == earlier

    facts = wait_for(lambda: (found := facts_of(user)) and len(found) == 3 and found)
    assert sorted(text for text, _ in facts) == sorted(t.removeprefix("[facts] ") for t in texts)


def test_reject_answers_409_chat_busy_with_retry_after_and_changes_nothing(
    slow_model: Served, db: firestore.Client
) -> None:
    served, user = slow_model, new_user()
    chat = start_chat(served, user)
    long_text = "Tell me " + " ".join(f"word{n}" for n in range(40))
    with _streaming(served, user, chat, long_text, "c1"):
        refused = served.say(user,
            {"message": "now", "client_message_id": "c2", "chat_id": chat,
             "multitask_strategy": "reject"},
        )  # fmt: skip
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "chat_busy"
    assert int(refused.headers["Retry-After"]) > 0
    assert not db.document(f"users/{user}/turns/c2").get().exists


def test_interrupt_stops_the_running_reply_and_keeps_its_part(
    slow_model: Served, db: firestore.Client
) -> None:
    served, user = slow_model, new_user()
    chat = start_chat(served, user)
    long_text = "[facts] Tell me " + " ".join(f"word{n}" for n in range(40))
    with _streaming(served, user, chat, long_text, "c1") as first:
        second = served.say(user,
            {"message": "stop, this instead", "client_message_id": "c2", "chat_id": chat,
             "multitask_strategy": "interrupt"},
        )  # fmt: skip
    assert second.status_code == 200 and second.json()["reply"]["kind"] == "text"
    done = first["done"]
    assert done["reply"]["kind"] == "interrupted"
    partial = done["reply"]["text"]
    assert partial and f"You said: {long_text}".startswith(partial) and len(partial) < 100
    turn = db.document(f"users/{user}/turns/c1").get().to_dict() or {}
    assert turn["metadata"]["outcome"] == "interrupted"
    assert not turn["metadata"]["extraction_enqueued"]  # it hands nothing off
    stored = stored_messages(db, user, chat)
    said = [m["text"] for m in stored]
    assert said[2:] == [long_text, partial, "stop, this instead", "You said: stop, this instead"]
    assert [m["kind"] for m in stored[2:]] == ["text", "interrupted", "text", "text"]


class _streaming:
    """Send ``text`` with a streamed reply; enter once its first token arrived; on exit the
    stream is read to its end (``done``: the final event's data)."""

    def __init__(self, served: Served, user: str, chat: str, text: str, cmid: str) -> None:
        self._args = (served, user, chat, text, cmid)
        self._first = threading.Event()
        self.events: dict[str, dict[str, object]] = {}
        self._thread = threading.Thread(target=self._read)

    def _read(self) -> None:
        served, user, chat, text, cmid = self._args
        body = {"message": text, "client_message_id": cmid, "stream": True}
        headers = {"Authorization": f"Bearer {served.token(user)}"}
        url = f"{served.origin_url}/v1/chats/{chat}/messages"
        with httpx.stream("POST", url, json=body, headers=headers, timeout=60) as r:
            name = ""
            for line in r.iter_lines():
                if line.startswith("event: "):
                    name = line.removeprefix("event: ")
                elif line.startswith("data: "):
                    self.events[name] = json.loads(line.removeprefix("data: "))
                    if name == "chunk":
                        self._first.set()
        self._first.set()

    def __enter__(self) -> dict[str, dict[str, object]]:
        self._thread.start()
        assert self._first.wait(60), "the first reply never started"
        return self.events

    def __exit__(self, *exc: object) -> None:
        self._thread.join(60)
