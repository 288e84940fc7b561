"""The assistant profile (``/v1/settings/assistant``) of the memory function over HTTP, on
the real stack: Firestore holds the profile, Redis the cached turn context an update drops."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis
from google.cloud import firestore

from shared.config import Settings
from shared.models.domain import AssistantProfile
from tests.e2e.conftest import Served, new_user, refused

pytestmark = [pytest.mark.e2e, pytest.mark.stack]

SETTINGS = Settings()
GET, UPDATE = "GET", "PATCH"
PATH = "/v1/settings/assistant"
DEFAULTS = AssistantProfile().model_dump(mode="json")


@pytest.fixture(scope="module")
def cache() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(SETTINGS.redis_url)
    yield client
    client.close()


def call(served: Served, user: str | None, method: str, body: Any = None) -> httpx.Response:
    return served.memory(user, method, PATH, body)


def profile(served: Served, user: str, method: str = GET, body: Any = None) -> dict[str, Any]:
    """The profile without its etag (which every change changes)."""
    response = call(served, user, method, body)
    assert response.status_code == 200, response.text
    return {name: value for name, value in response.json().items() if name != "etag"}


def context_key(user: str) -> str:
    return f"{SETTINGS.redis_prefix}:ctx:{user}"


def test_get_update_and_get_again(served: Served, db: firestore.Client, cache: redis.Redis) -> None:
    alice, bob = new_user(), new_user()
    assert profile(served, alice) == DEFAULTS
    cache.set(context_key(alice), b"cached context", ex=600)
    cache.set(context_key(bob), b"cached context", ex=600)

    changes = {"persona_name": "Ada", "timezone": "Europe/Zurich", "presentation_rules": ["terse"]}
    updated = profile(served, alice, UPDATE, changes)
    assert {name: updated[name] for name in changes} == changes
    assert (updated["tone"], updated["language"]) == (DEFAULTS["tone"], None)
    assert updated["updated_at"] is not None
    assert profile(served, alice) == updated
    assert cache.get(context_key(alice)) is None  # the next turn reloads the persona

    merged = profile(served, alice, UPDATE, {"tone": "formal", "language": "de"})
    assert merged == {
        **updated,
        "tone": "formal",
        "language": "de",
        "updated_at": merged["updated_at"],
    }
    assert merged["updated_at"] >= updated["updated_at"]
    assert profile(served, alice) == merged

    # Bob is untouched: his defaults, his cached context, no document of his.
    assert profile(served, bob) == DEFAULTS
    assert cache.get(context_key(bob)) == b"cached context"
    document = db.collection("users").document(alice).collection("settings").document("assistant")
    assert (document.get().to_dict() or {}).get("persona_name") == "Ada"
    assert not db.document(f"users/{bob}/settings/assistant").get().exists


def test_an_unknown_time_zone_is_refused_and_nothing_changes(
    served: Served, cache: redis.Redis
) -> None:
    user = new_user()
    before = profile(served, user, UPDATE, {"persona_name": "Ada"})
    cache.set(context_key(user), b"cached context", ex=600)
    for zone in ("Mars/Olympus", "Europe", "../../etc/passwd", "localtime"):
        response = call(served, user, UPDATE, {"timezone": zone, "tone": "changed too"})
        assert refused(response) == (422, "data_rejected"), zone
    assert profile(served, user) == before
    assert cache.get(context_key(user)) == b"cached context"


@pytest.mark.parametrize(
    "body",
    [{"mood": "cheerful"}, {"persona_name": None}, {"language": "deu"}, {"privacy_mode": "yes"}],
)
def test_invalid_fields_are_bad_requests(served: Served, body: dict[str, Any]) -> None:
    user = new_user()
    assert refused(call(served, user, UPDATE, body)) == (400, "invalid_request")
    assert profile(served, user) == DEFAULTS


@pytest.mark.parametrize("method", [GET, UPDATE])
def test_a_request_without_a_valid_token_is_unauthenticated(served: Served, method: str) -> None:
    assert refused(call(served, None, method, {"tone": "x"})) == (401, "unauthenticated")
    garbage = {"Authorization": "Bearer not.a.jwt"}
    url = served.memory_url.rstrip("/") + PATH
    response = httpx.request(method, url, json={"tone": "x"}, headers=garbage, timeout=30)
    assert refused(response) == (401, "unauthenticated")


def test_two_devices_saving_the_profile_the_stale_one_gets_412(served: Served) -> None:
    user = new_user()
    phone, laptop = call(served, user, GET).json(), call(served, user, GET).json()
    saved = served.memory(user, UPDATE, PATH, {"tone": "dry", "etag": phone["etag"]})
    assert saved.status_code == 200, saved.text
    stale = served.memory(user, UPDATE, PATH, {"persona_name": "Bo", "etag": laptop["etag"]})
    assert refused(stale) == (412, "stale_etag")
    assert (profile(served, user)["tone"], profile(served, user)["persona_name"]) == (
        "dry",
        DEFAULTS["persona_name"],
    )


def test_the_profile_is_exported_and_erased_with_the_account(served: Served) -> None:
    user = new_user()
    stored = profile(served, user, UPDATE, {"persona_name": "Ada"})
    exported = served.memory(user, "GET", "/v1/account:export").json()
    exported = exported["conversations"]["documents"]
    [document] = [d for d in exported if d["path"] == "settings/assistant"]
    assert document["data"]["persona_name"] == stored["persona_name"]

    assert served.memory(user, "DELETE", "/v1/account", confirm="true").status_code == 200
    assert profile(served, user) == DEFAULTS
