"""A dependency that is down degrades the product instead of taking it down.

Redis (rate counters and the context cache only): turns are still answered; rate limiting
falls back to the instance's token bucket and the context is loaded from the stores, each
logged once for the incident (the circuit breaker opens once).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from google.cloud import firestore

from tests.e2e.conftest import PrivateFunction, Served, free_port, new_user, private_function
from tests.e2e.snapshots import firestore_paths

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


@pytest.fixture
def turn_without_redis(served: Served, tmp_path: Path) -> Iterator[PrivateFunction]:
    env = {"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0", "RATE_LIMIT_PER_MINUTE": "8"}
    with private_function(served, "turn", env, log=tmp_path / "turn.log") as fn:
        yield fn


def test_redis_down_turns_are_answered_and_still_limited(
    served: Served, turn_without_redis: PrivateFunction, db: firestore.Client
) -> None:
    user = new_user()
    headers = {"Authorization": f"Bearer {served.token(user)}"}

    def send(message: str, client_id: str, chat_id: str | None) -> httpx.Response:
        body = {"message": message, "client_message_id": client_id}
        chat = chat_id or served.new_chat(user, client_id)
        url = f"{turn_without_redis.url}/v1/chats/{chat}/messages"
        return httpx.post(url, json=body, headers=headers, timeout=60)

    first = send("Hello", "d0", None)
    assert first.status_code == 200, first.text
    chat = first.json()["chat_id"]
    statuses = [send(f"Tell me about tide pools, part {n}", f"d{n}", chat) for n in range(1, 10)]
    codes = [r.status_code for r in statuses]
    assert codes == [200] * 7 + [429, 429]  # the bucket of 8 a minute, Redis or not
    assert statuses[0].json()["reply"]["text"].startswith("You said:")  # context from stores
    assert statuses[-1].json()["error"]["code"] == "rate_limited"
    assert sum("/messages/" in path for path in firestore_paths(db, user)) == 16
    assert turn_without_redis.log_lines("dependency unavailable: circuit open") == 1
    assert turn_without_redis.log_lines("rate limiting falls back to a per-instance bucket") == 1
