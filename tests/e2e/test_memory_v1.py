"""The memory function's /v1 conventions over HTTP on the real stack: two devices editing
one fact (the stale one is refused, nothing changes), page tokens bound to the user, the
filter and their expiry, keyset pages while facts arrive, and GET without effect."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import redis
from google.cloud import firestore

from shared.deps import Deps
from shared.models.memory import ExtractionChanges
from shared.rest.paging import TOKEN_TTL
from tests.e2e.conftest import EVAL_CLOCK, Served
from tests.e2e.memory_kit import (
    Seeded,
    call,
    chat_with,
    draft,
    everything,
    new_user,
    ok,
    open_cache,
    open_stores,
    refused,
    seed,
)

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


@pytest.fixture(scope="module")
def fact_stores() -> Iterator[Deps]:
    with open_stores() as deps:
        yield deps


@pytest.fixture(scope="module")
def redis_client() -> Iterator[redis.Redis]:
    with open_cache() as client:
        yield client


@pytest.fixture
def seeded(served: Served, fact_stores: Deps) -> Seeded:
    user = new_user()
    chat_with(served, user)
    return seed(fact_stores, user)


def test_two_devices_editing_one_fact_the_stale_one_gets_412_and_nothing_changes(
    served: Served, seeded: Seeded, db: firestore.Client, redis_client: redis.Redis
) -> None:
    user, path = seeded.user, f"/v1/facts/{seeded.facts['I live in Basel']}"
    phone, laptop = call(served, user, "GET", path), call(served, user, "GET", path)
    assert phone.headers["ETag"] == laptop.headers["ETag"] == f'"{phone.json()["etag"]}"'

    edited = served.memory(user, "PATCH", path, {"text": "I live in Bern"},
                           headers={"If-Match": phone.headers["ETag"]})  # fmt: skip
    assert edited.status_code == 200, edited.text
    before = everything(db, redis_client, user)
    for headers, body in [
        ({"If-Match": laptop.headers["ETag"]}, {"text": "I live in Zurich"}),
        ({}, {"text": "I live in Zurich", "etag": laptop.json()["etag"]}),
    ]:
        stale = served.memory(user, "PATCH", path, body, headers=headers)
        assert refused(stale) == (412, "stale_etag")
    stale_delete = served.memory(user, "DELETE", path, headers={"If-Match": laptop.headers["ETag"]})
    assert refused(stale_delete) == (412, "stale_etag")
    assert everything(db, redis_client, user) == before

    # the laptop reads again: the current version, with its own etag, takes the edit
    current = f"/v1/facts/{edited.json()['id']}"
    fresh = call(served, user, "GET", current)
    redone = served.memory(user, "PATCH", current, {"text": "I live in Zurich"},
                           headers={"If-Match": fresh.headers["ETag"]})  # fmt: skip
    assert (redone.status_code, redone.json()["text"]) == (200, "I live in Zurich")


def test_a_person_patched_from_a_stale_read_is_412(served: Served, seeded: Seeded) -> None:
    user, path = seeded.user, f"/v1/persons/{seeded.son.id}"
    read = ok(served, user, "GET", path)
    ok(served, user, "PATCH", path, {"aliases": ["Marti"], "etag": read["etag"]})
    stale = call(served, user, "PATCH", path, {"display_name": "Max", "etag": read["etag"]})
    assert refused(stale) == (412, "stale_etag")
    assert ok(served, user, "GET", path)["display_name"] == "Martin"


def test_facts_page_by_keyset_while_facts_are_added(
    served: Served, seeded: Seeded, fact_stores: Deps
) -> None:
    user = seeded.user
    existing = {f["id"] for f in served.facts(user)}
    seen: list[str] = []
    token = ""
    for page in range(20):
        arriving = [draft(f"arrived between pages {page}.{n}") for n in range(2)]
        changes = ExtractionChanges(new_facts=arriving)
        assert fact_stores.facts.apply_extraction(uuid.uuid4().hex, user, changes, now())
        answer = ok(served, user, "GET", "/v1/facts", page_size=2, page_token=token)
        seen += [f["id"] for f in answer["facts"]]
        token = answer["next_page_token"]
        if not token:
            break
    assert len(seen) == len(set(seen)), "a fact was listed twice"
    assert existing <= set(seen), "a fact was skipped"


def now() -> datetime:
    return datetime.now(UTC)


def test_a_forged_foreign_other_filter_or_expired_page_token_is_400(
    served: Served, seeded: Seeded
) -> None:
    user = seeded.user
    token = ok(served, user, "GET", "/v1/facts", page_size=1)["next_page_token"]
    assert token and ok(served, user, "GET", "/v1/facts", page_size=1, page_token=token)["facts"]
    payload, mac = token.split(".")
    forged = f"{payload[:-1]}{'A' if payload[-1] != 'A' else 'B'}.{mac}"
    for who, params in [
        (user, {"page_token": forged}),
        (new_user(), {"page_token": token}),  # another user's token
        (user, {"page_token": token, "filter": 'subject_id = "self"'}),
    ]:
        answer = call(served, who, "GET", "/v1/facts", **params)
        assert refused(answer) == (400, "invalid_page_token"), params
    EVAL_CLOCK.write_text(f"{TOKEN_TTL.total_seconds() + 60}\n")  # the functions' clock
    try:
        expired = call(served, user, "GET", "/v1/facts", page_token=token)
    finally:
        EVAL_CLOCK.write_text("0\n")
    assert refused(expired) == (400, "invalid_page_token")


def test_no_get_changes_anything(
    served: Served, seeded: Seeded, db: firestore.Client, redis_client: redis.Redis
) -> None:
    user = seeded.user
    fact, person = seeded.facts["I live in Basel"], seeded.son.id
    before = everything(db, redis_client, user)
    for path in [
        "/v1/facts", f"/v1/facts/{fact}", f"/v1/facts/{fact}/versions", "/v1/persons",
        f"/v1/persons/{person}", "/v1/pendingItems", f"/v1/pendingItems/{seeded.conflict_id}",
        "/v1/settings/assistant", "/v1/settings/hitl", "/v1/strategies", "/v1/account:export",
    ]:  # fmt: skip
        assert call(served, user, "GET", path).status_code == 200, path
    assert everything(db, redis_client, user) == before


def test_an_unknown_query_parameter_is_400(served: Served, seeded: Seeded) -> None:
    for path in ("/v1/facts", "/v1/persons", "/v1/settings/hitl", "/v1/account:export"):
        answer = call(served, seeded.user, "GET", path, user_id="someone-else")
        assert refused(answer) == (400, "invalid_request"), path
