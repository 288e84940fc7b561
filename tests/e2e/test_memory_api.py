"""The memory function's /v1 resources over HTTP, as docs/openapi.yaml describes them, on the
real stack.

Facts, persons and pending items are seeded through the real PostgreSQL adapters (what
extraction would have stored, encrypted under the user's key); chats through the turn
function. Every refusal is checked to change nothing, in any store.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
import jwt
import pytest
import redis
from cryptography.hazmat.primitives.asymmetric import rsa
from google.cloud import firestore

from scripts.stacklib.tokens import mint_user_token
from shared.adapters.postgres import Database, connect
from shared.adapters.scripted_llm import HashEmbedder
from shared.config import Settings
from shared.deps import Deps
from shared.models.memory import ExtractionChanges, FactDraft, FactFilter, PendingItem, Person
from tests.e2e.conftest import STATE, Served, function_without_redis
from tests.e2e.snapshots import firestore_paths

pytestmark = [pytest.mark.e2e, pytest.mark.stack]

SETTINGS = Settings()
EMBEDDER = HashEmbedder(dimension=768)  # what the fake Vertex endpoint embeds with
EVERY_FACT = FactFilter(include_history=True, limit=1000)


# -- the stores, read and written directly ----------------------------------------------------
@pytest.fixture(scope="module")
def stores() -> Iterator[Deps]:
    database = Database(SETTINGS)
    yield Deps(SETTINGS, _database=database)
    database.close()


@pytest.fixture(scope="module")
def cache() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(SETTINGS.redis_url)
    yield client
    client.close()


def pg_rows(user_id: str) -> dict[str, list[str]]:
    """Every row of every table with a ``user_id`` column that belongs to the user."""
    conn = connect(SETTINGS)
    try:
        cur = conn.cursor()
        cur.execute(
            "SELECT table_name FROM information_schema.columns"
            " WHERE table_schema = 'public' AND column_name = 'user_id' ORDER BY table_name"
        )
        tables = [str(row[0]) for row in cur.fetchall()]
        assert {"facts", "persons", "pending_items", "processed_tasks", "user_keys"} <= set(tables)
        rows: dict[str, list[str]] = {}
        for table in tables:
            cur.execute(
                f'SELECT t::text FROM "{table}" t WHERE user_id = %s ORDER BY 1', (user_id,)
            )
            rows[table] = [str(row[0]) for row in cur.fetchall()]
        return rows
    finally:
        conn.close()


def redis_keys(cache: redis.Redis, user_id: str) -> list[str]:
    """Keys naming the user as one of their segments (never counting ``<uid>_2``'s)."""
    names = (key.decode() for key in cache.scan_iter(match=f"*{user_id}*", count=1000))
    return sorted(name for name in names if user_id in name.split(":"))


def everything(db: firestore.Client, cache: redis.Redis, user_id: str) -> object:
    """What the stores hold for the user (rate buckets aside: they expire on their own)."""
    keys = [key for key in redis_keys(cache, user_id) if ":rate:" not in key]
    return pg_rows(user_id), firestore_paths(db, user_id), keys


# -- seeding ----------------------------------------------------------------------------------
def draft(text: str, subject: Person | None = None, **extra: Any) -> FactDraft:
    return FactDraft.model_validate(
        {
            "text": text,
            "subject_entity_id": subject.id if subject else None,
            "relation_to_user": subject.role_to_user if subject else "self",
            "confidence": 0.95,
            "embedding": EMBEDDER.embed([text])[0],
            "embedding_model": SETTINGS.vertex_embedding_model,
            "idempotency_key": f"seed-{uuid.uuid4().hex}",
            "source": {"chat_id": "c-seed", "turn_id": "t-seed", "message_id": "t-seed-u"},
            **extra,
        }
    )


@dataclass
class Seeded:
    user: str
    son: Person
    colleague: Person
    facts: dict[str, str] = field(default_factory=dict)  # text -> id
    conflict_id: str = ""
    ambiguity_id: str = ""


def seed(stores: Deps, user: str) -> Seeded:
    """Alice's memory: herself, her son Martin, her colleague Martin, two open questions."""
    son = Person(id=str(uuid.uuid4()), user_id=user, display_name="Martin", role_to_user="child")
    colleague = Person(
        id=str(uuid.uuid4()), user_id=user, display_name="Martin", role_to_user="colleague"
    )
    facts = [
        draft("I live in Basel"),
        draft("I am allergic to peanuts", type="Allergy", sensitivity="high"),
        draft("Martin is eight years old", son, type="Relationship"),
        draft("Martin plays football on Saturdays", son, type="Hobby"),
        draft("Martin works in accounting", colleague, type="Work"),
    ]
    now = datetime.now(UTC)
    stored = stores.facts.apply_extraction(
        f"seed-{uuid.uuid4()}",
        user,
        ExtractionChanges(new_persons=[son, colleague], new_facts=facts),
        now,
    )
    assert stored
    seeded = Seeded(user, son, colleague)
    seeded.facts = {f.text: f.id for f in stores.facts.list_facts(user, EVERY_FACT)}
    conflict = PendingItem(
        id=str(uuid.uuid4()),
        user_id=user,
        chat_id="c-seed",
        kind="fact_conflict",
        facts=[draft("I live in Zurich")],
        conflicting_fact_id=seeded.facts["I live in Basel"],
        created_at=now,
    )
    ambiguity = PendingItem(
        id=str(uuid.uuid4()),
        user_id=user,
        chat_id="c-seed",
        kind="disambiguation",
        mention="Martin",
        candidate_ids=[son.id, colleague.id],
        proposed_person=Person(
            id=str(uuid.uuid4()), user_id=user, display_name="Martin", role_to_user="friend"
        ),
        facts=[draft("Martin got a new bike").model_copy(update={"relation_to_user": "other"})],
        created_at=now,
    )
    changes = ExtractionChanges(pending=[conflict, ambiguity])
    assert stores.facts.apply_extraction(f"seed-{uuid.uuid4()}", user, changes, now)
    seeded.conflict_id, seeded.ambiguity_id = conflict.id, ambiguity.id
    return seeded


def new_user() -> str:
    return f"u{uuid.uuid4().hex[:12]}"


@pytest.fixture
def alice(stores: Deps) -> Seeded:
    return seed(stores, new_user())


@pytest.fixture
def bob(stores: Deps) -> Seeded:
    return seed(stores, new_user())


# -- calling the function ---------------------------------------------------------------------
def call(
    served: Served, user: str | None, method: str, path: str, body: Any = None, **params: Any
) -> httpx.Response:
    return served.memory(user, method, path, body, **params)


def ok(served: Served, user: str, method: str, path: str, body: Any = None, **params: Any) -> Any:
    response = call(served, user, method, path, body, **params)
    assert response.status_code == 200, response.text
    return response.json()


def refused(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


def texts(served: Served, user: str, where: str = "", history: bool = False) -> list[str]:
    return sorted(f["text"] for f in served.facts(user, where, history))


def about(subject: str) -> str:
    return f'subject_id = "{subject}"'


def persons(served: Served, user: str) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = ok(served, user, "GET", "/v1/persons")["persons"]
    return listed


def pending(served: Served, user: str, **params: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = ok(served, user, "GET", "/v1/pendingItems", **params)[
        "pending_items"
    ]
    return items


def search(served: Served, user: str, **body: Any) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = ok(served, user, "POST", "/v1/facts:search", body)["results"]
    return results


# -- facts ------------------------------------------------------------------------------------
def test_list_search_and_get_facts(served: Served, alice: Seeded, bob: Seeded) -> None:
    user, son = alice.user, alice.son.id
    assert len(texts(served, user)) == 5
    assert texts(served, user, about(son)) == [
        "Martin is eight years old",
        "Martin plays football on Saturdays",
    ]
    assert texts(served, user, about("self")) == ["I am allergic to peanuts", "I live in Basel"]
    assert texts(served, user, 'type = "Work"') == ["Martin works in accounting"]

    found = search(served, user, query="Martin plays football")
    assert found[0]["fact"]["text"] == "Martin plays football on Saturdays"
    assert found[0]["fact"]["subject_id"] == son
    assert all(r["fact"]["id"] not in bob.facts.values() for r in found)
    private = search(served, user, query="allergic to peanuts", privacy_mode=True)
    assert "I am allergic to peanuts" not in [r["fact"]["text"] for r in private]

    response = call(served, user, "GET", f"/v1/facts/{alice.facts['I live in Basel']}")
    fact = response.json()
    assert (fact["text"], fact["current"], fact["subject_id"], fact["source"]["chat_id"]) == (
        "I live in Basel",
        True,
        None,
        "c-seed",
    )
    assert response.headers["ETag"] == f'"{fact["etag"]}"'


def test_patch_supersedes_and_keeps_history(served: Served, alice: Seeded) -> None:
    user, old = alice.user, alice.facts["I live in Basel"]
    new = ok(served, user, "PATCH", f"/v1/facts/{old}", {"text": "I live in Zurich"})
    assert (new["text"], new["current"], new["confidence"]) == ("I live in Zurich", True, 1.0)
    assert new["id"] != old  # a new version, a new id
    previous = ok(served, user, "GET", f"/v1/facts/{old}")
    assert previous["current"] is False
    assert "I live in Basel" not in texts(served, user, about("self"))
    assert "I live in Basel" in texts(served, user, about("self"), history=True)

    # re-embedded: the new text is what semantic search finds
    top = search(served, user, query="I live in Zurich")[0]
    assert (top["fact"]["id"], top["similarity"] > 0.99) == (new["id"], True)

    again = call(served, user, "PATCH", f"/v1/facts/{old}", {"text": "I live in Bern"})
    assert refused(again) == (409, "fact_not_current")
    typed = ok(
        served, user, "PATCH", f"/v1/facts/{new['id']}", {"type": "Travel"}, update_mask="type"
    )
    assert (typed["text"], typed["type"]) == ("I live in Zurich", "Travel")


def test_versions_are_listed_restored_and_searched_as_of(served: Served, alice: Seeded) -> None:
    user, first = alice.user, alice.facts["I live in Basel"]
    before_edit = datetime.now(UTC).isoformat()
    edited = ok(served, user, "PATCH", f"/v1/facts/{first}", {"text": "I live in Zurich"})
    versions = ok(served, user, "GET", f"/v1/facts/{first}/versions")["versions"]
    assert [(v["text"], v["current"], v["ended_by"]) for v in versions] == [
        ("I live in Zurich", True, None),
        ("I live in Basel", False, "superseded"),
    ]
    then = search(served, user, query="I live in", as_of=before_edit)
    assert "I live in Basel" in [r["fact"]["text"] for r in then]
    assert "I live in Zurich" not in [r["fact"]["text"] for r in then]

    restored = ok(served, user, "POST", f"/v1/facts/{first}:restore", {})
    assert (restored["text"], restored["current"]) == ("I live in Basel", True)
    assert restored["id"] not in (first, edited["id"])
    assert texts(served, user, about("self")) == ["I am allergic to peanuts", "I live in Basel"]
    again = ok(served, user, "POST", f"/v1/facts/{first}:restore")  # a retry: no change
    assert again["id"] == restored["id"]
    assert len(ok(served, user, "GET", f"/v1/facts/{first}/versions")["versions"]) == 3


def test_delete_erases_a_fact(served: Served, alice: Seeded) -> None:
    gone = f"/v1/facts/{alice.facts['I am allergic to peanuts']}"
    assert ok(served, alice.user, "DELETE", gone) == {"deleted": True}
    assert "I am allergic to peanuts" not in texts(served, alice.user, history=True)
    assert refused(call(served, alice.user, "GET", gone)) == (404, "not_found")
    assert refused(call(served, alice.user, "DELETE", gone)) == (404, "not_found")


# -- persons ----------------------------------------------------------------------------------
def test_rename_split_merge_and_delete_persons(served: Served, alice: Seeded) -> None:
    user, son, colleague = alice.user, alice.son.id, alice.colleague.id
    assert sorted((p["display_name"], p["role_to_user"]) for p in persons(served, user)) == [
        ("Martin", "child"),
        ("Martin", "colleague"),
    ]
    change = {"display_name": "Martin Keller", "aliases": ["Keller"]}
    renamed = ok(served, user, "PATCH", f"/v1/persons/{colleague}", change)
    assert (renamed["display_name"], renamed["aliases"]) == ("Martin Keller", ["Keller"])
    assert ok(served, user, "GET", f"/v1/persons/{colleague}") == renamed

    split_body = {
        "new_person": {"display_name": "Martin (nephew)", "role_to_user": "other"},
        "fact_ids": [alice.facts["Martin plays football on Saturdays"]],
    }
    split = ok(served, user, "POST", f"/v1/persons/{son}:split", split_body)
    nephew = split["person"]["id"]
    assert split["moved"] == 1
    assert texts(served, user, about(nephew)) == ["Martin plays football on Saturdays"]
    assert texts(served, user, about(son)) == ["Martin is eight years old"]
    retried = ok(served, user, "POST", f"/v1/persons/{son}:split", split_body)
    assert retried["person"]["id"] == nephew
    assert len(persons(served, user)) == 3

    merge = f"/v1/persons/{son}:merge"
    assert ok(served, user, "POST", merge, {"absorb_id": nephew})["id"] == son
    assert len(texts(served, user, about(son))) == 2
    assert refused(call(served, user, "POST", merge, {"absorb_id": nephew})) == (404, "not_found")

    assert ok(served, user, "DELETE", f"/v1/persons/{colleague}") == {"deleted": True}
    assert "Martin works in accounting" not in texts(served, user, history=True)
    assert [p["id"] for p in persons(served, user)] == [son]


# -- pending items ----------------------------------------------------------------------------
def resolve(served: Served, user: str, item: str, **answer: Any) -> httpx.Response:
    return call(served, user, "POST", f"/v1/pendingItems/{item}:resolve", answer)


def test_pending_items_are_listed_and_answered_once(served: Served, alice: Seeded) -> None:
    user = alice.user
    items = {i["id"]: i for i in pending(served, user)}
    assert set(items) == {alice.conflict_id, alice.ambiguity_id}
    conflict, ambiguity = items[alice.conflict_id], items[alice.ambiguity_id]
    assert conflict["conflicting_fact"]["text"] == "I live in Basel"
    assert [f["text"] for f in conflict["facts"]] == ["I live in Zurich"]
    assert ambiguity["mention"] == "Martin"
    assert sorted(c["role_to_user"] for c in ambiguity["candidates"]) == ["child", "colleague"]
    assert ok(served, user, "GET", f"/v1/pendingItems/{alice.ambiguity_id}") == ambiguity
    assert pending(served, user, filter='chat_id = "another-chat"') == []
    assert len(pending(served, user, filter='chat_id = "c-seed"', page_size=1)) == 1

    taken = resolve(served, user, alice.conflict_id, choice="take_new").json()
    assert (taken["stored"], taken["item"]["resolved_at"] is not None) == (1, True)
    assert "I live in Zurich" in texts(served, user, about("self"))
    assert "I live in Basel" not in texts(served, user, about("self"))
    assert "I live in Basel" in texts(served, user, about("self"), history=True)
    twice = resolve(served, user, alice.conflict_id, choice="keep_old")
    assert refused(twice) == (409, "pending_not_open")

    chosen = resolve(served, user, alice.ambiguity_id, choice="person", person_id=alice.son.id)
    assert chosen.json()["stored"] == 1
    assert "Martin got a new bike" in texts(served, user, about(alice.son.id))
    assert pending(served, user) == []


def test_someone_else_creates_the_proposed_person(served: Served, alice: Seeded) -> None:
    user = alice.user
    answered = resolve(served, user, alice.ambiguity_id, choice="someone_else").json()
    proposed = answered["item"]["proposed_person"]
    by_id = {p["id"]: p for p in persons(served, user)}
    assert by_id[proposed["id"]]["role_to_user"] == "friend"
    assert texts(served, user, about(proposed["id"])) == ["Martin got a new bike"]


# -- export and account deletion --------------------------------------------------------------
def chat_with(served: Served, user: str) -> str:
    body = {"message": "Hello", "client_message_id": f"hello-{uuid.uuid4().hex[:8]}"}
    response = served.post(served.turn_url, user, body)
    assert response.status_code == 200, response.text
    chat_id: str = response.json()["chat_id"]
    return chat_id


def full_account(
    served: Served, stores: Deps, db: firestore.Client, cache: redis.Redis, user: str
) -> Seeded:
    """Data in all three stores: PostgreSQL (seeded), Firestore (a turn, a settings
    document), Redis (the turn's rate bucket and a cached value)."""
    seeded = seed(stores, user)
    chat_with(served, user)
    db.collection("users").document(user).set({"timezone": "Europe/Zurich"})
    cache.set(f"{SETTINGS.redis_prefix}:cache:{user}:profile", b"x", ex=600)
    return seeded


def test_export_contains_what_was_stored(
    served: Served, stores: Deps, db: firestore.Client, cache: redis.Redis
) -> None:
    alice = full_account(served, stores, db, cache, new_user())
    old = alice.facts["I live in Basel"]
    ok(served, alice.user, "PATCH", f"/v1/facts/{old}", {"text": "I live in Bern"})

    exported = ok(served, alice.user, "GET", "/v1/account:export")
    assert (exported["format"], exported["user_id"]) == ("memory-export/1", alice.user)
    facts = {f["text"]: f for f in exported["facts"]}
    assert set(facts) == {*alice.facts, "I live in Bern"}
    assert (facts["I live in Basel"]["current"], facts["I live in Bern"]["current"]) == (
        False,
        True,
    )
    assert sorted(p["display_name"] for p in exported["persons"]) == ["Martin", "Martin"]
    assert {p["id"] for p in exported["pending"]} == {alice.conflict_id, alice.ambiguity_id}
    conversations = exported["conversations"]
    assert conversations["settings"] == {"timezone": "Europe/Zurich"}
    [chat] = conversations["chats"]
    assert chat["messages"][0]["text"] == "Hello"
    assert [m["role"] for m in chat["messages"]] == ["user", "assistant"]
    assert [d["path"].split("/")[0] for d in conversations["documents"]] == ["turns"]


def delete_account(served: Served, user: str) -> Any:
    return ok(served, user, "DELETE", "/v1/account", confirm="true")


def test_account_deletion_leaves_nothing_behind(
    served: Served, stores: Deps, db: firestore.Client, cache: redis.Redis
) -> None:
    user = new_user()
    neighbour = f"{user}_2"  # shares the uid as a prefix: must not be touched
    full_account(served, stores, db, cache, user)
    full_account(served, stores, db, cache, neighbour)
    rows = pg_rows(user)
    assert all(
        rows[t] for t in ("facts", "persons", "pending_items", "processed_tasks", "user_keys")
    )
    assert firestore_paths(db, user) and redis_keys(cache, user)
    neighbours_before = everything(db, cache, neighbour)

    assert delete_account(served, user) == {"deleted": True}

    assert pg_rows(user) == {table: [] for table in pg_rows(user)}
    assert firestore_paths(db, user) == {}
    assert not db.collection("users").document(user).get().exists
    assert redis_keys(cache, user) == []
    assert everything(db, cache, neighbour) == neighbours_before

    # Idempotent: again, and reading afterwards, creates nothing (not even a data key).
    assert delete_account(served, user) == {"deleted": True}
    assert ok(served, user, "GET", "/v1/facts")["facts"] == []
    empty = ok(served, user, "GET", "/v1/account:export")
    assert (empty["facts"], empty["persons"], empty["conversations"]["chats"]) == ([], [], [])
    assert pg_rows(user) == {table: [] for table in pg_rows(user)}
    assert firestore_paths(db, user) == {}


@pytest.fixture
def memory_without_redis(served: Served) -> Iterator[str]:
    with function_without_redis(served, "memory") as url:
        yield url


def test_account_deletion_interrupted_by_an_outage_completes_when_retried(
    served: Served,
    stores: Deps,
    db: firestore.Client,
    cache: redis.Redis,
    memory_without_redis: str,
) -> None:
    user = new_user()
    full_account(served, stores, db, cache, user)
    headers = {"Authorization": f"Bearer {served.token(user)}"}
    response = httpx.delete(
        memory_without_redis + "/v1/account",
        params={"confirm": "true"},
        headers=headers,
        timeout=60,
    )
    assert refused(response) == (503, "dependency_unavailable")
    assert redis_keys(cache, user)  # not reached yet

    assert delete_account(served, user) == {"deleted": True}
    assert pg_rows(user) == {table: [] for table in pg_rows(user)}
    assert firestore_paths(db, user) == {}
    assert redis_keys(cache, user) == []


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
        served.memory_url.rstrip("/") + filled(path, watched),
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
