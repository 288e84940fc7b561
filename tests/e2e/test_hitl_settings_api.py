"""The human-in-the-loop settings (``/v1/settings/hitl``) of the memory function over HTTP,
on the real stack: Firestore holds the trust record at ``users/{uid}/settings/trust``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from google.cloud import firestore

from shared.adapters.firestore_trust import FirestoreTrustStore
from shared.services.hitl import record_task_outcome
from tests.e2e.conftest import Served, new_user, refused

pytestmark = [pytest.mark.e2e, pytest.mark.stack]

GET, UPDATE = "GET", "PATCH"
PATH = "/v1/settings/hitl"


def call(
    served: Served, user: str | None, method: str, body: Any = None, **q: Any
) -> httpx.Response:
    return served.memory(user, method, PATH, body, **q)


def hitl(served: Served, user: str, method: str = GET, body: Any = None) -> dict[str, Any]:
    """The settings without their etag (which a pin changes)."""
    response = call(served, user, method, body)
    assert response.status_code == 200, response.text
    assert response.headers["ETag"] == f'"{response.json()["etag"]}"'
    return {name: value for name, value in response.json().items() if name != "etag"}


def test_pin_get_and_unpin(served: Served, db: firestore.Client) -> None:
    alice, bob = new_user(), new_user()
    fresh = hitl(served, alice)
    assert (fresh["level"], fresh["mode"], fresh["pinned_mode"], fresh["updated_at"]) == (
        "novice",
        "human_in_command",
        None,
        None,
    )
    assert fresh["next_level"]["level"] == "proficient"

    pinned = hitl(served, alice, UPDATE, {"pinned_mode": "human_in_the_loop"})
    assert (pinned["mode"], pinned["level_mode"], pinned["pinned_mode"]) == (
        "human_in_the_loop",
        "human_in_command",
        "human_in_the_loop",
    )
    assert pinned["updated_at"] is not None
    assert hitl(served, alice) == pinned
    document = db.document(f"users/{alice}/settings/trust").get().to_dict() or {}
    assert (document["pinned_mode"], document["tasks_completed"]) == ("human_in_the_loop", 0)

    unpinned = hitl(served, alice, UPDATE, {"pinned_mode": None})
    assert (unpinned["mode"], unpinned["pinned_mode"]) == ("human_in_command", None)
    assert hitl(served, alice) == unpinned

    assert hitl(served, bob) == fresh  # untouched, and no document of his
    assert not db.document(f"users/{bob}/settings/trust").get().exists


def test_recorded_outcomes_show_and_pinning_keeps_them(
    served: Served, db: firestore.Client
) -> None:
    user = new_user()
    store = FirestoreTrustStore(db)
    start = datetime.now(UTC) - timedelta(days=10)
    for i in range(50):
        record_task_outcome(store, user, "success", start + timedelta(hours=i))
    record_task_outcome(store, user, "failure", start + timedelta(days=8))  # promotes

    shown = hitl(served, user)
    assert (shown["level"], shown["mode"], shown["tasks_completed"], shown["tasks_failed"]) == (
        "proficient",  # 50 successes, 50/51 > 90 %, 7 days since the first task
        "human_in_the_loop",
        50,
        1,
    )
    assert shown["success_rate"] == pytest.approx(50 / 51)
    expert = shown["next_level"]
    assert (expert["level"], expert["eligible"]) == ("expert", False)
    assert [r["name"] for r in expert["requirements"] if not r["met"]] == [
        "tasks_completed",
        "days_since_first_task",
    ]

    pinned = hitl(served, user, UPDATE, {"pinned_mode": "human_in_command"})
    assert {k: pinned[k] for k in ("level", "tasks_completed", "tasks_failed")} == {
        "level": "proficient",
        "tasks_completed": 50,
        "tasks_failed": 1,
    }
    assert pinned["mode"] == "human_in_command"


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"pinned_mode": "autopilot"},
        {"pinned_mode": True},
        {"pinned_mode": "human_on_the_loop", "tasks_completed": 999},
        {"pinned_mode": None, "level": "expert"},
        {"level": "expert"},
        ["human_on_the_loop"],
    ],
)
def test_anything_but_a_mode_is_a_bad_request(served: Served, body: Any) -> None:
    user = new_user()
    before = hitl(served, user, UPDATE, {"pinned_mode": "human_in_command"})
    response = call(served, user, UPDATE, body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] in ("invalid_request", "invalid_json")
    assert hitl(served, user) == before


def test_the_get_takes_no_parameters(served: Served) -> None:
    assert refused(call(served, new_user(), GET, level="expert")) == (400, "invalid_request")


@pytest.mark.parametrize("method", [GET, UPDATE])
def test_a_request_without_a_valid_token_is_unauthenticated(served: Served, method: str) -> None:
    body = {"pinned_mode": "human_on_the_loop"}
    assert refused(call(served, None, method, body)) == (401, "unauthenticated")
    url = served.memory_url.rstrip("/") + PATH
    garbage = {"Authorization": "Bearer not.a.jwt"}
    response = httpx.request(method, url, json=body, headers=garbage, timeout=30)
    assert refused(response) == (401, "unauthenticated")


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_only_get_and_patch_are_served(served: Served, method: str) -> None:
    response = call(served, new_user(), method)
    assert refused(response) == (405, "method_not_allowed")
    assert response.headers["Allow"] == "GET, PATCH"


def test_a_stale_etag_pins_nothing(served: Served) -> None:
    user = new_user()
    read = call(served, user, GET)
    assert call(served, user, UPDATE, {"pinned_mode": "human_in_the_loop"}).status_code == 200
    stale = served.memory(
        user, UPDATE, PATH, {"pinned_mode": None}, headers={"If-Match": read.headers["ETag"]}
    )
    assert refused(stale) == (412, "stale_etag")
    assert hitl(served, user)["pinned_mode"] == "human_in_the_loop"


def test_the_trust_record_is_exported_and_erased_with_the_account(served: Served) -> None:
    user = new_user()
    hitl(served, user, UPDATE, {"pinned_mode": "human_on_the_loop"})
    exported = served.memory(user, "GET", "/v1/account:export").json()
    exported = exported["conversations"]["documents"]
    [document] = [d for d in exported if d["path"] == "settings/trust"]
    assert (document["data"]["pinned_mode"], document["data"]["level"]) == (
        "human_on_the_loop",
        "novice",
    )

    assert served.memory(user, "DELETE", "/v1/account", confirm="true").status_code == 200
    after = hitl(served, user)
    assert (after["pinned_mode"], after["updated_at"]) == (None, None)
