"""``/v1/chats``: create (idempotent by request id), get, list by pages, rename with an etag;
titles from the first message; a foreign chat or page token is refused; GET changes nothing."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.e2e.conftest import Served, new_user, refused
from tests.e2e.test_turn_graph_over_http import seed_namesakes

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


def _turn(served: Served, user: str, message: str, chat: str | None = None) -> dict[str, Any]:
    body = {"message": message, "client_message_id": uuid.uuid4().hex}
    response = served.say(user, {**body, "chat_id": chat} if chat else body)
    assert response.status_code == 200, response.text
    return dict(response.json())


def _all_pages(served: Served, user: str, path: str, key: str, size: int) -> list[str]:
    seen: list[str] = []
    token = ""
    while True:
        params: dict[str, Any] = {"page_size": size, **({"page_token": token} if token else {})}
        page = served.api("GET", path, user, params=params)
        assert page.status_code == 200, page.text
        seen += [item["id"] for item in page.json()[key]]
        token = page.json()["next_page_token"]
        if not token:
            return seen


def test_chats_are_listed_most_recent_first_with_titles_and_the_waiting_question(
    served: Served,
) -> None:
    user = new_user()
    seed_namesakes(user)
    plain = _turn(served, user, "Hello")
    asking = _turn(served, user, "[facts] [ask] @Thomas moved to Bern; what does he like?")
    assert asking["interrupt"]["kind"] == "disambiguation"

    listed = served.api("GET", "/v1/chats", user)
    assert listed.status_code == 200, listed.text
    chats = listed.json()["chats"]
    assert [(c["id"], c["title"], c["question"] is not None) for c in chats] == [
        (asking["chat_id"], "[facts] [ask] @Thomas moved to Bern; what does he like?", True),
        (plain["chat_id"], "", False),  # a greeting names nothing
    ]
    assert chats[0]["question"]["id"] == asking["interrupt"]["id"]
    assert listed.json()["next_page_token"] == ""
    one = served.api("GET", "/v1/chats", user, params={"page_size": 1}).json()
    assert [c["id"] for c in one["chats"]] == [asking["chat_id"]] and one["next_page_token"]


def test_messages_say_what_they_are_and_a_question_names_its_interrupt(served: Served) -> None:
    user = new_user()
    seed_namesakes(user)
    listed = _turn(served, user, "Pack for Rome:\n1. shoes\n2. a hat")  # its reply lists too
    asking = _turn(served, user, "[facts] [ask] @Thomas moved to Bern; what does he like?")
    asked = asking["interrupt"]["id"]

    def kinds(chat: str) -> list[tuple[str, str, str | None]]:
        page = served.messages(user, chat)
        assert page.status_code == 200, page.text
        return [(m["role"], m["kind"], m["question_id"]) for m in page.json()["messages"]]

    assert kinds(listed["chat_id"]) == [("user", "text", None), ("assistant", "text", None)]
    assert kinds(asking["chat_id"]) == [("user", "text", None), ("assistant", "question", asked)]
    waiting = served.messages(user, asking["chat_id"]).json()["question"]
    assert waiting["id"] == asked  # the log line and the card, tied by the id


def test_chats_page_without_duplicate_or_gap_while_chats_are_added(served: Served) -> None:
    user = new_user()
    made = [served.new_chat(user, f"r{index}") for index in range(5)]
    first = served.api("GET", "/v1/chats", user, params={"page_size": 2}).json()
    served.new_chat(user, "added-meanwhile")  # newer: before the first page, not in later ones
    rest = _all_pages(served, user, "/v1/chats", "chats", 2)
    assert sorted(rest) == sorted([*made, served.new_chat(user, "added-meanwhile")])
    token = first["next_page_token"]
    later: list[str] = [c["id"] for c in first["chats"]]
    while token:
        page = served.api("GET", "/v1/chats", user, params={"page_size": 2, "page_token": token})
        later += [c["id"] for c in page.json()["chats"]]
        token = page.json()["next_page_token"]
    assert sorted(later) == sorted(made) and len(set(later)) == 5


def test_a_page_token_works_only_for_its_user_and_list(served: Served) -> None:
    user = new_user()
    for index in range(3):
        served.new_chat(user, f"t{index}")
    token = served.api("GET", "/v1/chats", user, params={"page_size": 1}).json()
    token = token["next_page_token"]
    chat = served.new_chat(user)
    for who, path, given in (
        (new_user(), "/v1/chats", token),  # another user's
        (user, "/v1/chats", token[:-2] + ("AA" if token[-2:] != "AA" else "BB")),  # forged
        (user, "/v1/chats", "not-a-token"),
        (user, f"/v1/chats/{chat}/messages", token),  # another list's
        (user, "/v1/jobs", token),
    ):
        answer = served.api("GET", path, who, params={"page_token": given})
        assert refused(answer) == (400, "invalid_page_token"), (path, answer.text)


def test_create_is_idempotent_by_request_id_and_rename_is_conditional(served: Served) -> None:
    user = new_user()
    created = served.api("POST", "/v1/chats", user, {"title": "Trips"}, params={"request_id": "r1"})
    again = served.api("POST", "/v1/chats", user, {}, params={"request_id": "r1"})
    assert created.status_code == again.status_code == 200
    chat = created.json()
    assert again.json() == chat and chat["title"] == "Trips"
    assert created.headers["ETag"] == f'"{chat["etag"]}"'
    path = f"/v1/chats/{chat['id']}"
    renamed = served.api("PATCH", path, user, {"title": "Rome"}, headers={"If-Match": chat["etag"]})
    assert renamed.status_code == 200 and renamed.json()["title"] == "Rome"
    assert renamed.json()["etag"] != chat["etag"]
    stale = served.api("PATCH", path, user, {"title": "Paris"}, headers={"If-Match": chat["etag"]})
    assert refused(stale) == (412, "stale_etag")
    stale_body = served.api("PATCH", path, user, {"title": "Paris", "etag": chat["etag"]})
    assert refused(stale_body) == (412, "stale_etag")
    now = served.api("GET", path, user)
    assert now.json()["title"] == "Rome"  # nothing changed
    assert now.headers["ETag"] == f'"{renamed.json()["etag"]}"'
    _turn(served, user, "Plan a day in Ostia. Cheap.", chat["id"])
    assert served.api("GET", path, user).json()["title"] == "Rome"  # the user's title stays
    unconditional = served.api("PATCH", path, user, {"title": "Ostia"})
    assert unconditional.json()["title"] == "Ostia"


def test_the_first_message_titles_a_new_chat(served: Served) -> None:
    user = new_user()
    chat = served.new_chat(user)
    assert served.api("GET", f"/v1/chats/{chat}", user).json()["title"] == ""
    _turn(served, user, "  What's the weather\nlike in Bern tomorrow? And after?", chat)
    got = served.api("GET", f"/v1/chats/{chat}", user).json()
    assert (got["title"], got["message_count"]) == ("What's the weather like in Bern tomorrow?", 2)


def test_reads_are_safe_and_refusals_are_documented(
    served: Served, victim: tuple[str, str]
) -> None:
    user, chat = victim  # the fixture checks that nothing stored changed
    for path in ("/v1/chats", f"/v1/chats/{chat}", f"/v1/chats/{chat}/messages", "/v1/jobs"):
        assert served.api("GET", path, user).status_code == 200, path
    messages = served.messages(user, chat, order_by="create_time desc", page_size=1).json()
    assert [m["role"] for m in messages["messages"]] == ["assistant"]
    assert served.api("GET", "/v1/chats", new_user()).json() == {"chats": [], "next_page_token": ""}
    assert refused(served.api("GET", "/v1/chats", None)) == (401, "unauthenticated")
    for params in ({"page_size": -1}, {"user_id": user}, {"limit": 5}):
        assert refused(served.api("GET", "/v1/chats", user, params=params))[0] == 400, params
    bad_filter = served.messages(user, chat, filter="text = 'x'")
    assert refused(bad_filter) == (400, "invalid_request")
    deleted = served.api("DELETE", f"/v1/chats/{chat}", user)
    assert deleted.status_code == 405 and set(deleted.headers["Allow"].split(", ")) == {
        "GET", "PATCH"}  # fmt: skip
    put = served.api("PUT", f"/v1/chats/{chat}/messages", user)
    assert put.status_code == 405 and set(put.headers["Allow"].split(", ")) == {"GET", "POST"}
    assert refused(served.api("GET", "/v1/chatz", user)) == (404, "not_found")
