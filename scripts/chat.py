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
``GET /v1/notifications?filter=unread``) are printed there too, once: shown is read.
"""

from __future__ import annotations

import argparse
import json
import sys
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


class Poll:
    """What arrived in the chat since the last look: printed once each."""

    def __init__(self, client: httpx.Client) -> None:
        self._client = client
        self._after: str | None = None
        self._asked: set[str] = set()  # questions whose options were shown

    def news(self, chat_id: str | None, show: bool = True) -> str | None:
        """Print new assistant messages; the open question's id, if any."""
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
            if show and message["role"] == "assistant":
                print(f"\nassistant > {message['text']}")
        interrupt = view.get("question")
        if interrupt is None:
            return None
        if show and interrupt["id"] not in self._asked:
            for number, option in enumerate(interrupt["options"], start=1):
                print(f"  {number}. {option['label']}")
        self._asked.add(interrupt["id"])
        return str(interrupt["id"])


def due_notifications(client: httpx.Client) -> None:
    """Print what rang since the last prompt (reminders due, jobs done, approvals waiting)
    and mark each read, so it is printed once."""
    response = client.get("/v1/notifications", params={"filter": "unread", "page_size": 20})
    if response.status_code != 200:
        return
    for note in reversed(response.json()["notifications"]):  # oldest first
        label = "reminder" if note["kind"] == "reminder_due" else note["title"]
        print(f"\n[{label}] {note['body']}")
        client.post(f"/v1/notifications/{note['id']}:markRead", json={})


def chat(origin: str, headers: dict[str, str]) -> None:
    chat_id: str | None = None
    interrupt_id: str | None = None
    with httpx.Client(base_url=origin, timeout=300, headers=headers) as client:
        poll = Poll(client)
        while True:
            interrupt_id = poll.news(chat_id) or interrupt_id
            due_notifications(client)
            try:
                message = input("\nyou > ").strip()
            except EOFError:
                return
            if not message:
                continue
            reply = None
            if interrupt_id is not None:  # try it as the answer; if it picks nothing, move on
                path = f"/v1/chats/{chat_id}/questions/{interrupt_id}:answer"
                reply = exchange(client, path, {"answer": message})
            if reply is None or reply.error == "invalid_request":
                chat_id = chat_id or new_chat(client)
                if chat_id is None:
                    continue
                body = {"message": message, "client_message_id": uuid4()}
                reply = exchange(client, f"/v1/chats/{chat_id}/messages", body)
            chat_id, interrupt_id = reply.chat_id or chat_id, reply.interrupt_id
            poll.news(chat_id, show=False)  # what was just streamed is seen


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
                result = Exchange(data["chat_id"], interrupt.get("id"))
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
