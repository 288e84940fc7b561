"""Terminal chat against the local stack's one origin (``/v1``): streams replies, answers
questions.

    .venv/bin/python scripts/chat.py [--profile dev] [--user dev-user]

It uses the same path as a real client (docs/api.md): a minted ID token, one base URL (the
stack's origin, scripts/web_serve.py), a chat made with ``POST /v1/chats`` and messages sent
to ``/v1/chats/{chat}/messages`` streaming Server-Sent Events. A question streams with
numbered options; the next input goes to ``.../questions/{question}:answer`` (a number, the
option's words), and if it picks no option (400), to the chat as a new message. Before each
prompt (an empty line asks again) it polls the chat (``GET .../messages`` with a
``create_time`` filter): agent results and questions background work asked in the meantime
are shown, and answered the same way. Due reminders and other notifications (the inbox,
``GET /v1/notifications?filter=unread``) are printed there too, once: shown is read. While
the prompt waits, the same look is taken every few seconds (``CHAT_WATCH_SECONDS``), so a
reminder rings at its time, not at the next Enter.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.serve import read_env, state_dir  # noqa: E402
from scripts.stacklib.profile import Profile  # noqa: E402
from scripts.stacklib.tokens import mint_user_token  # noqa: E402


def sse_events(response: httpx.Response) -> Iterator[tuple[str, dict[str, Any]]]:
    event, data = "message", ""
    for line in response.iter_lines():
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data += line[5:].strip()
        elif not line and data:
            yield event, json.loads(data)
            event, data = "message", ""


def print_error(body: dict[str, Any]) -> None:
    error = body.get("error", body)
    print(f"\n[error {error.get('code')}] {error.get('message')}")


@dataclass(frozen=True)
class Exchange:
    chat_id: str | None = None
    interrupt_id: str | None = None  # the question the reply left open
    error: str | None = None
    turn_id: str | None = None


class Poll:
    """What arrived in the chat since the last look: printed once each."""

    def __init__(self, client: httpx.Client) -> None:
        self._client = client
        self._after: str | None = None
        self._asked: set[str] = set()  # questions whose options were shown
        self._printed = False  # since the last ``printed(reset=True)``

    def printed(self, reset: bool = False) -> bool:
        printed = self._printed
        if reset:
            self._printed = False
        return printed

    def news(self, chat_id: str | None, streamed: str | None = None) -> str | None:
        """Print new assistant messages but the reply of turn ``streamed`` (it was just
        shown as it streamed; a job that finished meanwhile is not); the open question's
        id, if any."""
        if chat_id is None:
            return None
        query: dict[str, str | int] = {"page_size": 200}
        if self._after:
            query["filter"] = f'create_time > "{self._after}"'
        response = self._client.get(f"/v1/chats/{chat_id}/messages", params=query)
        if response.status_code != 200:
            return None
        view = response.json()
        for message in view["messages"]:
            self._after = message["created_at"]
            if message["role"] == "assistant" and message["id"] != f"{streamed}-a":
                print(f"\nassistant > {message['text']}")
                self._printed = True
        interrupt = view.get("question")
        if interrupt is None:
            return None
        if streamed is None and interrupt["id"] not in self._asked:
            for number, option in enumerate(interrupt["options"], start=1):
                print(f"  {number}. {option['label']}")
            self._printed = True
        self._asked.add(interrupt["id"])
        return str(interrupt["id"])


def due_notifications(client: httpx.Client) -> bool:
    """Print what rang since the last look (reminders due, jobs done, approvals waiting)
    and mark each read, so it is printed once; whether anything was."""
    response = client.get("/v1/notifications", params={"filter": "unread", "page_size": 20})
    if response.status_code != 200:
        return False
    notes = response.json()["notifications"]
    for note in reversed(notes):  # oldest first
        label = "reminder" if note["kind"] == "reminder_due" else note["title"]
        print(f"\n[{label}] {note['body']}")
        client.post(f"/v1/notifications/{note['id']}:markRead", json={})
    return bool(notes)


PROMPT = "\nyou > "


class Session:
    """The chat, its open question, and one look at what arrived: taken before each prompt
    and, while the prompt waits, by a watcher thread (never while a reply streams)."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client
        self.poll = Poll(client)
        self.chat_id: str | None = None
        self.interrupt_id: str | None = None
        self.lock = threading.Lock()  # one user of the client and the terminal at a time
        self.waiting = False  # the prompt is shown and waits for a line

    def look(self) -> bool:
        """Print what arrived (chat messages, notifications); whether anything was."""
        self.interrupt_id = self.poll.news(self.chat_id) or self.interrupt_id
        return self.poll.printed(reset=True) | due_notifications(self.client)

    def watch(self, every: float) -> None:
        while True:
            time.sleep(every)
            with self.lock:
                try:
                    if self.waiting and self.look():
                        print(PROMPT, end="", flush=True)  # the user's typing stays in the line
                except httpx.HTTPError:
                    pass  # the stack is away for a moment: the next look, or the next Enter

    def read_line(self) -> str:
        with self.lock:
            self.look()
            self.waiting = True
        try:
            return input(PROMPT).strip()
        finally:
            with self.lock:
                self.waiting = False

    def say(self, message: str) -> None:
        client, reply = self.client, None
        if self.interrupt_id is not None:  # try it as the answer; if it picks nothing, move on
            path = f"/v1/chats/{self.chat_id}/questions/{self.interrupt_id}:answer"
            reply = exchange(client, path, {"answer": message})
        if reply is None or reply.error == "invalid_request":
            self.chat_id = self.chat_id or new_chat(client)
            if self.chat_id is None:
                return
            body = {"message": message, "client_message_id": uuid4()}
            reply = exchange(client, f"/v1/chats/{self.chat_id}/messages", body)
        self.chat_id, self.interrupt_id = reply.chat_id or self.chat_id, reply.interrupt_id
        self.poll.news(self.chat_id, streamed=reply.turn_id)


def chat(origin: str, headers: dict[str, str]) -> None:
    every = float(os.environ.get("CHAT_WATCH_SECONDS", "5"))
    with httpx.Client(base_url=origin, timeout=300, headers=headers) as client:
        session = Session(client)
        threading.Thread(target=session.watch, args=(every,), daemon=True).start()
        while True:
            try:
                message = session.read_line()
            except EOFError:
                return
            if message:
                with session.lock:
                    session.say(message)


def uuid4() -> str:
    return uuid.uuid4().hex


def new_chat(client: httpx.Client) -> str | None:
    """A chat for the first message (its title comes from that message)."""
    response = client.post("/v1/chats", json={}, params={"request_id": uuid4()})
    if response.status_code != 200:
        print_error(response.json())
        return None
    return str(response.json()["id"])


def exchange(client: httpx.Client, url: str, body: dict[str, Any]) -> Exchange:
    """POST, stream the reply to the terminal, and say what it left open."""
    with client.stream("POST", url, json=body, headers={"Accept": "text/event-stream"}) as r:
        if r.status_code != 200:
            r.read()
            code = r.json().get("error", {}).get("code")
            if not (code == "invalid_request" and "answer" in body):
                print_error(r.json())
            return Exchange(error=code)
        print("assistant > ", end="", flush=True)
        result = Exchange()
        for event, data in sse_events(r):
            if event == "chunk":
                print(data["text"], end="", flush=True)
            elif event in ("done", "interrupt"):
                interrupt = data.get("interrupt") or {}
                result = Exchange(data["chat_id"], interrupt.get("id"), turn_id=data["turn_id"])
                if interrupt:
                    print("\n(answer with a number or in your own words)", end="")
            elif event == "error":
                print_error(data)
        print()
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--profile", default="dev")
    parser.add_argument("--user", default="dev-user")
    args = parser.parse_args()
    read_env(args.profile)  # exits, saying how, when the stack is not up
    token = mint_user_token(state_dir(args.profile), args.user, ttl=12 * 3600)
    print(f"chatting as {args.user!r} (offline local model; Ctrl-D to quit)")
    origin = Profile(args.profile).url("web").rstrip("/")  # scripts/web_serve.py
    chat(origin, {"Authorization": f"Bearer {token}"})


if __name__ == "__main__":
    main()
