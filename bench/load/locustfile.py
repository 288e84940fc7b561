"""The mixed workload: what one simulated user does, with the paths the report names.

Each Locust user is a fresh account with one chat (its first message, a greeting). Then,
by weight: greetings, simple questions, memory questions (semantic retrieval), statements
that trigger fact extraction, and actions that ask for approval and are approved through
``resume`` (the agent job then posts its result). Every turn has a new client_message_id.
Status codes are counted per path and code; the users and chats are kept for the checks
after the run.
"""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from locust import HttpUser, between, events, task

from scripts.stacklib.tokens import mint_user_token

STATE: dict[str, Any] = {"state_dir": ""}
CODES: Counter[tuple[str, int]] = Counter()
CHATS: dict[str, str] = {}  # user -> chat
_lock = threading.Lock()


class ChatUser(HttpUser):
    wait_time = between(0.5, 1.5)  # a person typing, not a tight loop

    def on_start(self) -> None:
        self.user = f"load{uuid.uuid4().hex[:12]}"
        token = mint_user_token(STATE["state_dir"], self.user, ttl=7200)
        self.headers = {"Authorization": f"Bearer {token}"}
        made = self._post("create chat", "/v1/chats", {})
        self.chat: str = made["id"] if made else "none"
        with _lock:
            CHATS[self.user] = self.chat
        self._turn("greeting", "Hello")

    def _turn(self, path: str, message: str) -> dict[str, Any] | None:
        body = {"message": message, "client_message_id": uuid.uuid4().hex}
        return self._post(path, f"/v1/chats/{self.chat}/messages", body)

    def _post(self, path: str, url: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """``url`` is a path under the host (the one origin)."""
        with self.client.post(
            url, json=body, headers=self.headers, name=path, catch_response=True
        ) as response:
            with _lock:
                CODES[(path, response.status_code)] += 1
            if response.status_code != 200:
                response.failure(f"{response.status_code}")
                return None
            data: dict[str, Any] = response.json()
            if (data.get("reply") or {}).get("kind") == "fallback":  # a 200 that failed inside
                response.failure("fallback")
            return data

    @task(2)
    def greeting(self) -> None:
        self._turn("greeting", "Hi there!")

    @task(4)
    def simple(self) -> None:
        self._turn("simple", f"How do tides work, part {uuid.uuid4().hex[:4]}?")

    @task(2)
    def memory(self) -> None:
        self._turn("memory", "[ask] What do you know about my garden?")

    @task(2)
    def statement(self) -> None:
        self._turn("statement", f"[facts] I planted {uuid.uuid4().hex[:6]} tomatoes")

    @task(2)
    def approval(self) -> None:
        asked = self._turn("approval ask", "[act] Add a reminder to water the garden")
        interrupt = (asked or {}).get("interrupt")
        if asked is None or not interrupt:
            return
        answer = f"/v1/chats/{asked['chat_id']}/questions/{interrupt['id']}:answer"
        self._post("approval answer", answer, {"answer": "yes"})


def _settings_from_environment() -> None:
    """The runner (``python -m bench.load``) passes where the stack is through the
    environment: the stack's state (to mint tokens); the host is the one origin."""
    import os

    STATE["state_dir"] = os.environ.get("LOAD_STATE_DIR", "")


_settings_from_environment()


@events.quitting.add_listener  # type: ignore[untyped-decorator]
def _keep_users(environment: Any, **kwargs: Any) -> None:
    import json
    import os

    target = os.environ.get("LOAD_USERS_FILE")
    if target:
        with _lock:
            Path(target).write_text(json.dumps(CHATS))
