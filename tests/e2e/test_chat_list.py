"""The resume function's ``/chats``: a client's list of the user's chats."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Served, new_user, refused
from tests.e2e.test_turn_graph_over_http import seed_namesakes

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


def _turn(served: Served, user: str, message: str) -> dict[str, Any]:
    body = {"message": message, "client_message_id": uuid.uuid4().hex}
    response = served.say(user, body)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_chats_are_listed_most_recent_first_with_the_waiting_question(served: Served) -> None:
    user = new_user()
    seed_namesakes(user)
    plain = _turn(served, user, "Hello")
    asking = _turn(served, user, "[facts] [ask] @Thomas moved to Bern; what does he like?")
    assert asking["interrupt"]["kind"] == "disambiguation"

    listed = served.post(served.resume_url + "chats", user, {})
    assert listed.status_code == 200, listed.text
    chats = listed.json()["chats"]
    assert [(c["id"], c["waiting"]) for c in chats] == [
        (asking["chat_id"], True),
        (plain["chat_id"], False),
    ]
    assert all(c["message_count"] >= 2 for c in chats)
    one = served.post(served.resume_url + "chats", user, {"limit": 1}).json()["chats"]
    assert [c["id"] for c in one] == [asking["chat_id"]]
    empty_body = httpx.post(
        served.resume_url + "chats",
        headers={"Authorization": f"Bearer {served.token(user)}"},
        timeout=30,
    )
    assert empty_body.status_code == 200 and len(empty_body.json()["chats"]) == 2


def test_the_list_is_the_callers_own_and_refuses_bad_requests(served: Served) -> None:
    user = new_user()
    _turn(served, user, "Hello")
    assert served.post(served.resume_url + "chats", new_user(), {}).json() == {"chats": []}
    assert refused(served.post(served.resume_url + "chats", None, {})) == (401, "unauthenticated")
    for body in ({"limit": 0}, {"limit": 101}, {"user_id": user}):
        assert refused(served.post(served.resume_url + "chats", user, body)) == (
            400,
            "invalid_request",
        )
