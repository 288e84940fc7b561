"""The memory function refuses what it must over HTTP, on the real stack, and changes
nothing when it does: malformed and invalid requests, missing or bad credentials, another
method, and another user's ids."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import jwt
import pytest
import redis
from cryptography.hazmat.primitives.asymmetric import rsa
from google.cloud import firestore

from scripts.stacklib.tokens import mint_user_token
from shared.deps import Deps
from tests.e2e.conftest import STATE, Served
from tests.e2e.memory_kit import (
    SETTINGS,
    Seeded,
    about,
    call,
    everything,
    full_account,
    new_user,
    ok,
    refused,
)

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


# -- refusals ---------------------------------------------------------------------------------
LONG = "x" * 201
SPLIT = b'{"new_person": {"display_name": "M"}, "fact_ids": '
Case = tuple[str, str, dict[str, str], bytes, int, str]  # method, path, query, body, answer
CASES: dict[str, Case] = {
    "malformed json": ("PATCH", "/v1/facts/{fact}", {}, b'{"text": ', 400, "invalid_json"),
    "not an object": ("POST", "/v1/facts:search", {}, b"[]", 400, "invalid_json"),
    "unknown field": (
        "PATCH",
        "/v1/facts/{fact}",
        {},
        b'{"user_id": "bob"}',
        400,
        "invalid_request",
    ),
    "unknown parameter": ("GET", "/v1/facts", {"user_id": "bob"}, b"", 400, "invalid_request"),
    "negative page size": ("GET", "/v1/facts", {"page_size": "-1"}, b"", 400, "invalid_request"),
    "forged page token": (
        "GET",
        "/v1/persons",
        {"page_token": "e30.AAAA"},
        b"",
        400,
        "invalid_page_token",
    ),
    "bad subject": (
        "GET",
        "/v1/facts",
        {"filter": 'subject_id = "nobody"'},
        b"",
        400,
        "invalid_request",
    ),
    "bad type": ("GET", "/v1/facts", {"filter": 'type = "Gossip"'}, b"", 400, "invalid_request"),
    "filter outside the grammar": (
        "GET",
        "/v1/facts",
        {"filter": "type != Work"},
        b"",
        400,
        "invalid_request",
    ),
    "a word for a boolean": (
        "GET",
        "/v1/facts",
        {"show_history": "perhaps"},
        b"",
        400,
        "invalid_request",
    ),
    "empty query": ("POST", "/v1/facts:search", {}, b'{"query": ""}', 400, "invalid_request"),
    "query too long": (
        "POST",
        "/v1/facts:search",
        {},
        b'{"query": "' + b"q" * 1001 + b'"}',
        400,
        "invalid_request",
    ),
    "fact id not a uuid": ("GET", "/v1/facts/not-a-uuid", {}, b"", 400, "invalid_request"),
    "patch nothing": ("PATCH", "/v1/facts/{fact}", {}, b"{}", 400, "invalid_request"),
    "patch blank text": (
        "PATCH",
        "/v1/facts/{fact}",
        {},
        b'{"text": "   "}',
        400,
        "invalid_request",
    ),
    "patch text too long": (
        "PATCH",
        "/v1/facts/{fact}",
        {},
        b'{"text": "' + LONG.encode() + b'"}',
        400,
        "invalid_request",
    ),
    "mask an unknown field": (
        "PATCH",
        "/v1/facts/{fact}",
        {"update_mask": "user_id"},
        b"{}",
        400,
        "invalid_request",
    ),
    "mask a text it nulls": (
        "PATCH",
        "/v1/facts/{fact}",
        {"update_mask": "text"},
        b"{}",
        400,
        "invalid_request",
    ),
    "stale etag in the body": (
        "PATCH",
        "/v1/facts/{fact}",
        {},
        b'{"text": "t", "etag": "stale"}',
        412,
        "stale_etag",
    ),
    "update bad role": (
        "PATCH",
        "/v1/persons/{son}",
        {},
        b'{"role_to_user": "boss"}',
        400,
        "invalid_request",
    ),
    "update null name": (
        "PATCH",
        "/v1/persons/{son}",
        {},
        b'{"display_name": null}',
        400,
        "invalid_request",
    ),
    "name too long": (
        "PATCH",
        "/v1/persons/{son}",
        {},
        b'{"display_name": "' + b"n" * 121 + b'"}',
        400,
        "invalid_request",
    ),
    "merge with itself": (
        "POST",
        "/v1/persons/{son}:merge",
        {},
        b'{"absorb_id": "{son}"}',
        409,
        "conflict",
    ),
    "split nothing": (
        "POST",
        "/v1/persons/{son}:split",
        {},
        SPLIT + b"[]}",
        400,
        "invalid_request",
    ),
    "split twice the same fact": (
        "POST",
        "/v1/persons/{son}:split",
        {},
        SPLIT + b'["{fact}", "{fact}"]}',
        400,
        "invalid_request",
    ),
    "split a fact of someone else": (
        "POST",
        "/v1/persons/{son}:split",
        {},
        SPLIT + b'["{fact}"]}',
        400,
        "invalid_request",
    ),
    "unknown choice": (
        "POST",
        "/v1/pendingItems/{conflict}:resolve",
        {},
        b'{"choice": "maybe"}',
        400,
        "invalid_request",
    ),
    "person without id": (
        "POST",
        "/v1/pendingItems/{ambiguity}:resolve",
        {},
        b'{"choice": "person"}',
        400,
        "invalid_request",
    ),
    "wrong kind of answer": (
        "POST",
        "/v1/pendingItems/{conflict}:resolve",
        {},
        b'{"choice": "someone_else"}',
        400,
        "invalid_request",
    ),
    "bad chat id": (
        "GET",
        "/v1/pendingItems",
        {"filter": 'chat_id = "../x"'},
        b"",
        400,
        "invalid_request",
    ),
    "unconfirmed deletion": (
        "DELETE",
        "/v1/account",
        {"confirm": "false"},
        b"",
        400,
        "invalid_request",
    ),
    "deletion without confirmation": ("DELETE", "/v1/account", {}, b"", 400, "invalid_request"),
    "body too large": (
        "POST",
        "/v1/facts:search",
        {},
        b'{"query": "q", "pad": "' + b"p" * 70000 + b'"}',
        413,
        "payload_too_large",
    ),
    "unknown custom method": ("POST", "/v1/facts:purge", {}, b"{}", 404, "not_found"),
    "restore with fields": (
        "POST",
        "/v1/facts/{fact}:restore",
        {},
        b'{"version_id": "v1"}',
        400,
        "invalid_request",
    ),
    "restore a malformed id": ("POST", "/v1/facts/v1:restore", {}, b"{}", 400, "invalid_request"),
    "restore an unknown version": (
        "POST",
        "/v1/facts/{missing}:restore",
        {},
        b"{}",
        404,
        "not_found",
    ),
    "versions of an unknown fact": (
        "GET",
        "/v1/facts/{missing}/versions",
        {},
        b"",
        404,
        "not_found",
    ),
    "as of a time without a zone": (
        "POST",
        "/v1/facts:search",
        {},
        b'{"query": "q", "as_of": "2026-01-01T00:00:00"}',
        400,
        "invalid_request",
    ),
    "as of no time at all": (
        "POST",
        "/v1/facts:search",
        {},
        b'{"query": "q", "as_of": "last week"}',
        400,
        "invalid_request",
    ),
    "restore body too large": (
        "POST",
        "/v1/facts/{fact}:restore",
        {},
        b'{"x": "' + b"0" * 70000 + b'"}',
        413,
        "payload_too_large",
    ),
    "unknown fact": ("DELETE", "/v1/facts/{missing}", {}, b"", 404, "not_found"),
    "unknown pending item": (
        "POST",
        "/v1/pendingItems/{missing}:resolve",
        {},
        b'{"choice": "keep_old"}',
        404,
        "not_found",
    ),
    "unknown strategy": ("DELETE", "/v1/strategies/nothing-learned", {}, b"", 404, "not_found"),
}


@pytest.fixture
def watched(
    served: Served, stores: Deps, db: firestore.Client, cache: redis.Redis
) -> Iterator[Seeded]:
    """A full account; after the test, every store holds exactly what it held before."""
    alice = full_account(served, stores, db, cache, new_user())
    before = everything(db, cache, alice.user)
    yield alice
    assert everything(db, cache, alice.user) == before


def filled(text: str, seeded: Seeded) -> str:
    fact = seeded.facts["Martin works in accounting"]  # the colleague's, not the son's
    for name, value in {
        "fact": fact,
        "son": seeded.son.id,
        "conflict": seeded.conflict_id,
        "ambiguity": seeded.ambiguity_id,
        "missing": str(uuid.uuid4()),
    }.items():
        text = text.replace("{" + name + "}", value)
    return text


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_requests_are_refused_and_change_nothing(
    served: Served, watched: Seeded, case: str
) -> None:
    method, path, query, body, status, code = CASES[case]
    response = httpx.request(
        method,
        served.origin_url + filled(path, watched),
        params=query,
        content=filled(body.decode(), watched).encode() if body else None,
        headers={
            "Authorization": f"Bearer {served.token(watched.user)}",
            "Content-Type": "application/json",
        },
        timeout=30,
    )
    assert refused(response) == (status, code), response.text


def forged_token(user: str) -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = int(time.time())
    claims: dict[str, object] = {
        "iss": SETTINGS.auth_issuer,
        "aud": SETTINGS.auth_audience,
        "sub": user,
        "iat": now,
        "exp": now + 600,
    }
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": "forged"})


@pytest.mark.parametrize("auth", ["none", "not bearer", "garbage", "forged", "expired"])
@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/v1/facts"), ("GET", "/v1/account:export"), ("DELETE", "/v1/account"),
     ("GET", "/nowhere")],
)  # fmt: skip
def test_unauthenticated_requests(
    served: Served, watched: Seeded, auth: str, method: str, path: str
) -> None:
    user = watched.user
    header = {
        "none": None,
        "not bearer": f"Basic {served.token(user)}",
        "garbage": "Bearer not.a.jwt",
        "forged": f"Bearer {forged_token(user)}",
        "expired": f"Bearer {mint_user_token(STATE, user, ttl=-120)}",
    }[auth]
    headers = {"Authorization": header} if header else {}
    url = served.memory_url.rstrip("/") + path
    response = httpx.request(method, url, params={"confirm": "true"}, headers=headers, timeout=30)
    assert refused(response) == (401, "unauthenticated")


def test_another_method_is_405_with_allow(served: Served, watched: Seeded) -> None:
    fact = f"/v1/facts/{watched.facts['I live in Basel']}"
    for method, path, allow in [
        ("GET", "/v1/account", "DELETE"),
        ("DELETE", "/v1/facts", "GET"),
        ("PUT", fact, "GET, PATCH, DELETE"),
        ("POST", "/v1/settings/assistant", "GET, PATCH"),
        ("GET", "/v1/facts:search", "POST"),
    ]:
        response = call(served, watched.user, method, path)
        assert refused(response) == (405, "method_not_allowed"), (method, path)
        assert response.headers["Allow"] == allow


def test_another_users_ids_are_not_found_and_nothing_changes(
    served: Served, stores: Deps, db: firestore.Client, cache: redis.Redis, watched: Seeded
) -> None:
    """Alice (watched) holds ids of Bob's rows; every use of them is 404, Bob's rows too
    stay exactly as they were."""
    bob = full_account(served, stores, db, cache, new_user())
    bobs_before = everything(db, cache, bob.user)
    bobs_fact, bobs_person = bob.facts["Martin is eight years old"], bob.son.id
    mine = watched.son.id
    split = {"new_person": {"display_name": "M"}, "fact_ids": [bobs_fact]}
    attempts: list[tuple[str, str, Any, dict[str, str]]] = [
        ("GET", f"/v1/facts/{bobs_fact}", None, {}),
        ("PATCH", f"/v1/facts/{bobs_fact}", {"text": "Martin is nine"}, {}),
        ("DELETE", f"/v1/facts/{bobs_fact}", None, {}),
        ("GET", f"/v1/facts/{bobs_fact}/versions", None, {}),
        ("POST", f"/v1/facts/{bobs_fact}:restore", None, {}),
        ("GET", "/v1/facts", None, {"filter": about(bobs_person)}),
        ("POST", "/v1/facts:search", {"query": "Martin", "subject_id": bobs_person}, {}),
        ("GET", f"/v1/persons/{bobs_person}", None, {}),
        ("PATCH", f"/v1/persons/{bobs_person}", {"display_name": "Mine now"}, {}),
        ("POST", f"/v1/persons/{mine}:merge", {"absorb_id": bobs_person}, {}),
        ("POST", f"/v1/persons/{bobs_person}:merge", {"absorb_id": mine}, {}),
        ("POST", f"/v1/persons/{bobs_person}:split", split, {}),
        ("POST", f"/v1/persons/{mine}:split", split, {}),
        ("DELETE", f"/v1/persons/{bobs_person}", None, {}),
        ("GET", f"/v1/pendingItems/{bob.conflict_id}", None, {}),
        ("POST", f"/v1/pendingItems/{bob.conflict_id}:resolve", {"choice": "keep_both"}, {}),
        (
            "POST",
            f"/v1/pendingItems/{watched.ambiguity_id}:resolve",
            {"choice": "person", "person_id": bobs_person},
            {},
        ),
    ]
    for method, path, body, query in attempts:
        response = call(served, watched.user, method, path, body, **query)
        assert refused(response) == (404, "not_found"), (method, path)
    exported = ok(served, watched.user, "GET", "/v1/account:export")
    assert bob.facts["Martin is eight years old"] not in str(exported)
    assert everything(db, cache, bob.user) == bobs_before
