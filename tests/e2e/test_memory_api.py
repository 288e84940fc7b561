"""The memory function over HTTP, as docs/openapi.yaml describes it, on the real stack.

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
def url(served: Served, path: str) -> str:
    return served.memory_url.rstrip("/") + path


def call(served: Served, user: str | None, path: str, body: Any = None) -> httpx.Response:
    return served.post(url(served, path), user, {} if body is None else body)


def ok(served: Served, user: str, path: str, body: Any = None) -> dict[str, Any]:
    response = call(served, user, path, body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def refused(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


def texts(served: Served, user: str, **where: Any) -> list[str]:
    return sorted(f["text"] for f in ok(served, user, "/facts/list", where)["facts"])


# -- facts ------------------------------------------------------------------------------------
def test_list_search_and_get_facts(served: Served, alice: Seeded, bob: Seeded) -> None:
    user, son = alice.user, alice.son.id
    assert len(texts(served, user)) == 5
    assert texts(served, user, subject_id=son) == [
        "Martin is eight years old",
        "Martin plays football on Saturdays",
    ]
    assert texts(served, user, subject_id="self") == ["I am allergic to peanuts", "I live in Basel"]
    assert texts(served, user, type="Work") == ["Martin works in accounting"]

    found = ok(served, user, "/facts/search", {"query": "Martin plays football"})["results"]
    assert found[0]["fact"]["text"] == "Martin plays football on Saturdays"
    assert found[0]["fact"]["subject_id"] == son
    assert all(r["fact"]["id"] not in bob.facts.values() for r in found)
    private = ok(
        served, user, "/facts/search", {"query": "allergic to peanuts", "privacy_mode": True}
    )
    assert "I am allergic to peanuts" not in [r["fact"]["text"] for r in private["results"]]

    fact = ok(served, user, "/facts/get", {"fact_id": alice.facts["I live in Basel"]})["fact"]
    assert (fact["text"], fact["current"], fact["subject_id"], fact["source"]["chat_id"]) == (
        "I live in Basel",
        True,
        None,
        "c-seed",
    )


def test_edit_supersedes_and_keeps_history(served: Served, alice: Seeded) -> None:
    user, old = alice.user, alice.facts["I live in Basel"]
    edited = ok(served, user, "/facts/edit", {"fact_id": old, "text": "I live in Zurich"})
    new = edited["fact"]
    assert (new["text"], new["current"], new["confidence"]) == ("I live in Zurich", True, 1.0)
    assert (edited["previous"]["id"], edited["previous"]["current"]) == (old, False)
    assert "I live in Basel" not in texts(served, user, subject_id="self")
    assert "I live in Basel" in texts(served, user, subject_id="self", include_history=True)

    # re-embedded: the new text is what semantic search finds
    top = ok(served, user, "/facts/search", {"query": "I live in Zurich"})["results"][0]
    assert (top["fact"]["id"], top["similarity"] > 0.99) == (new["id"], True)

    again = call(served, user, "/facts/edit", {"fact_id": old, "text": "I live in Bern"})
    assert refused(again) == (409, "fact_not_current")


def test_versions_are_listed_restored_and_searched_as_of(served: Served, alice: Seeded) -> None:
    user, first = alice.user, alice.facts["I live in Basel"]
    before_edit = datetime.now(UTC).isoformat()
    edited = ok(served, user, "/facts/edit", {"fact_id": first, "text": "I live in Zurich"})
    versions = ok(served, user, "/facts/versions", {"fact_id": first})["versions"]
    assert [(v["text"], v["current"], v["ended_by"]) for v in versions] == [
        ("I live in Zurich", True, None),
        ("I live in Basel", False, "superseded"),
    ]
    then = ok(served, user, "/facts/search", {"query": "I live in", "as_of": before_edit})
    assert "I live in Basel" in [r["fact"]["text"] for r in then["results"]]
    assert "I live in Zurich" not in [r["fact"]["text"] for r in then["results"]]

    restored = ok(served, user, "/facts/restore", {"version_id": first})
    assert (restored["fact"]["text"], restored["fact"]["current"]) == ("I live in Basel", True)
    assert restored["previous"]["id"] == edited["fact"]["id"]
    assert texts(served, user, subject_id="self") == ["I am allergic to peanuts", "I live in Basel"]
    again = ok(served, user, "/facts/restore", {"version_id": first})  # a retry: no change
    assert again["fact"]["id"] == restored["fact"]["id"]
    assert len(ok(served, user, "/facts/versions", {"fact_id": first})["versions"]) == 3


def test_delete_erases_a_fact(served: Served, alice: Seeded) -> None:
    gone = alice.facts["I am allergic to peanuts"]
    assert ok(served, alice.user, "/facts/delete", {"fact_id": gone}) == {"deleted": True}
    assert "I am allergic to peanuts" not in texts(served, alice.user, include_history=True)
    assert refused(call(served, alice.user, "/facts/get", {"fact_id": gone})) == (404, "not_found")
    again = call(served, alice.user, "/facts/delete", {"fact_id": gone})
    assert refused(again) == (404, "not_found")


# -- persons ----------------------------------------------------------------------------------
def test_rename_split_merge_and_delete_persons(served: Served, alice: Seeded) -> None:
    user, son, colleague = alice.user, alice.son.id, alice.colleague.id
    persons = ok(served, user, "/persons/list")["persons"]
    assert sorted((p["display_name"], p["role_to_user"]) for p in persons) == [
        ("Martin", "child"),
        ("Martin", "colleague"),
    ]
    renamed = ok(
        served,
        user,
        "/persons/update",
        {"person_id": colleague, "display_name": "Martin Keller", "aliases": ["Keller"]},
    )["person"]
    assert (renamed["display_name"], renamed["aliases"]) == ("Martin Keller", ["Keller"])

    split_body = {
        "person_id": son,
        "new_person": {"display_name": "Martin (nephew)", "role_to_user": "other"},
        "fact_ids": [alice.facts["Martin plays football on Saturdays"]],
    }
    split = ok(served, user, "/persons/split", split_body)
    nephew = split["person"]["id"]
    assert split["moved"] == 1
    assert texts(served, user, subject_id=nephew) == ["Martin plays football on Saturdays"]
    assert texts(served, user, subject_id=son) == ["Martin is eight years old"]
    assert ok(served, user, "/persons/split", split_body)["person"]["id"] == nephew  # a retry
    assert len(ok(served, user, "/persons/list")["persons"]) == 3

    merged = ok(served, user, "/persons/merge", {"keep_id": son, "absorb_id": nephew})
    assert merged["person"]["id"] == son
    assert len(texts(served, user, subject_id=son)) == 2
    again = call(served, user, "/persons/merge", {"keep_id": son, "absorb_id": nephew})
    assert refused(again) == (404, "not_found")

    assert ok(served, user, "/persons/delete", {"person_id": colleague}) == {"deleted": True}
    assert "Martin works in accounting" not in texts(served, user, include_history=True)
    assert [p["id"] for p in ok(served, user, "/persons/list")["persons"]] == [son]


# -- pending items ----------------------------------------------------------------------------
def test_pending_items_are_listed_and_answered_once(served: Served, alice: Seeded) -> None:
    user = alice.user
    items = {i["id"]: i for i in ok(served, user, "/pending/list")["items"]}
    assert set(items) == {alice.conflict_id, alice.ambiguity_id}
    conflict, ambiguity = items[alice.conflict_id], items[alice.ambiguity_id]
    assert conflict["conflicting_fact"]["text"] == "I live in Basel"
    assert [f["text"] for f in conflict["facts"]] == ["I live in Zurich"]
    assert ambiguity["mention"] == "Martin"
    assert sorted(c["role_to_user"] for c in ambiguity["candidates"]) == ["child", "colleague"]
    assert ok(served, user, "/pending/list", {"chat_id": "another-chat"})["items"] == []

    taken = ok(
        served, user, "/pending/resolve", {"pending_id": alice.conflict_id, "choice": "take_new"}
    )
    assert (taken["stored"], taken["item"]["resolved_at"] is not None) == (1, True)
    assert "I live in Zurich" in texts(served, user, subject_id="self")
    assert "I live in Basel" not in texts(served, user, subject_id="self")
    assert "I live in Basel" in texts(served, user, subject_id="self", include_history=True)
    twice = call(
        served, user, "/pending/resolve", {"pending_id": alice.conflict_id, "choice": "keep_old"}
    )
    assert refused(twice) == (409, "pending_not_open")

    chosen = ok(
        served,
        user,
        "/pending/resolve",
        {"pending_id": alice.ambiguity_id, "choice": "person", "person_id": alice.son.id},
    )
    assert chosen["stored"] == 1
    assert "Martin got a new bike" in texts(served, user, subject_id=alice.son.id)
    assert ok(served, user, "/pending/list")["items"] == []


def test_someone_else_creates_the_proposed_person(served: Served, alice: Seeded) -> None:
    user = alice.user
    body = {"pending_id": alice.ambiguity_id, "choice": "someone_else"}
    proposed = ok(served, user, "/pending/resolve", body)["item"]["proposed_person"]
    persons = {p["id"]: p for p in ok(served, user, "/persons/list")["persons"]}
    assert persons[proposed["id"]]["role_to_user"] == "friend"
    assert texts(served, user, subject_id=proposed["id"]) == ["Martin got a new bike"]


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
    ok(served, alice.user, "/facts/edit", {"fact_id": old, "text": "I live in Bern"})

    exported = ok(served, alice.user, "/export")
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

    assert ok(served, user, "/account/delete", {"confirm": True}) == {"deleted": True}

    assert pg_rows(user) == {table: [] for table in pg_rows(user)}
    assert firestore_paths(db, user) == {}
    assert not db.collection("users").document(user).get().exists
    assert redis_keys(cache, user) == []
    assert everything(db, cache, neighbour) == neighbours_before

    # Idempotent: again, and reading afterwards, creates nothing (not even a data key).
    assert ok(served, user, "/account/delete", {"confirm": True}) == {"deleted": True}
    assert ok(served, user, "/facts/list")["facts"] == []
    empty = ok(served, user, "/export")
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
    response = httpx.post(
        memory_without_redis + "/account/delete",
        json={"confirm": True},
        headers=headers,
        timeout=60,
    )
    assert refused(response) == (503, "dependency_unavailable")
    assert redis_keys(cache, user)  # not reached yet

    assert ok(served, user, "/account/delete", {"confirm": True}) == {"deleted": True}
    assert pg_rows(user) == {table: [] for table in pg_rows(user)}
    assert firestore_paths(db, user) == {}
    assert redis_keys(cache, user) == []


# -- refusals ---------------------------------------------------------------------------------
LONG = "x" * 201
CASES: dict[str, tuple[str, bytes, int, str]] = {
    "malformed json": ("/facts/list", b'{"limit": ', 400, "invalid_json"),
    "not an object": ("/facts/list", b"[]", 400, "invalid_json"),
    "unknown field": ("/facts/list", b'{"user_id": "bob"}', 400, "invalid_request"),
    "limit zero": ("/facts/list", b'{"limit": 0}', 400, "invalid_request"),
    "limit too big": ("/facts/list", b'{"limit": 1001}', 400, "invalid_request"),
    "bad subject": ("/facts/list", b'{"subject_id": "nobody"}', 400, "invalid_request"),
    "bad type": ("/facts/list", b'{"type": "Gossip"}', 400, "invalid_request"),
    "empty query": ("/facts/search", b'{"query": ""}', 400, "invalid_request"),
    "query too long": (
        "/facts/search",
        b'{"query": "' + b"q" * 1001 + b'"}',
        400,
        "invalid_request",
    ),
    "fact id not a uuid": ("/facts/get", b'{"fact_id": "../x"}', 400, "invalid_request"),
    "edit without text": ("/facts/edit", b'{"fact_id": "{fact}"}', 400, "invalid_request"),
    "edit blank text": (
        "/facts/edit",
        b'{"fact_id": "{fact}", "text": "   "}',
        400,
        "invalid_request",
    ),
    "edit text too long": (
        "/facts/edit",
        b'{"fact_id": "{fact}", "text": "' + LONG.encode() + b'"}',
        400,
        "invalid_request",
    ),
    "update nothing": ("/persons/update", b'{"person_id": "{son}"}', 400, "invalid_request"),
    "update bad role": (
        "/persons/update",
        b'{"person_id": "{son}", "role_to_user": "boss"}',
        400,
        "invalid_request",
    ),
    "update null name": (
        "/persons/update",
        b'{"person_id": "{son}", "display_name": null}',
        400,
        "invalid_request",
    ),
    "name too long": (
        "/persons/update",
        b'{"person_id": "{son}", "display_name": "' + b"n" * 121 + b'"}',
        400,
        "invalid_request",
    ),
    "merge with itself": (
        "/persons/merge",
        b'{"keep_id": "{son}", "absorb_id": "{son}"}',
        409,
        "conflict",
    ),
    "a number for a boolean": (
        "/facts/list",
        b'{"include_history": 0}',
        400,
        "invalid_request",
    ),
    "split nothing": (
        "/persons/split",
        b'{"person_id": "{son}", "new_person": {"display_name": "M"}, "fact_ids": []}',
        400,
        "invalid_request",
    ),
    "split twice the same fact": (
        "/persons/split",
        b'{"person_id": "{son}", "new_person": {"display_name": "M"},'
        b' "fact_ids": ["{fact}", "{fact}"]}',
        400,
        "invalid_request",
    ),
    "split a fact of someone else": (
        "/persons/split",
        b'{"person_id": "{son}", "new_person": {"display_name": "M"}, "fact_ids": ["{fact}"]}',
        400,
        "invalid_request",
    ),
    "unknown choice": (
        "/pending/resolve",
        b'{"pending_id": "{conflict}", "choice": "maybe"}',
        400,
        "invalid_request",
    ),
    "person without id": (
        "/pending/resolve",
        b'{"pending_id": "{ambiguity}", "choice": "person"}',
        400,
        "invalid_request",
    ),
    "wrong kind of answer": (
        "/pending/resolve",
        b'{"pending_id": "{conflict}", "choice": "someone_else"}',
        400,
        "invalid_request",
    ),
    "bad chat id": ("/pending/list", b'{"chat_id": "../x"}', 400, "invalid_request"),
    "unconfirmed deletion": ("/account/delete", b'{"confirm": false}', 400, "invalid_request"),
    "deletion confirmed by a string": (
        "/account/delete",
        b'{"confirm": "true"}',
        400,
        "invalid_request",
    ),
    "deletion without body": ("/account/delete", b"", 400, "invalid_request"),
    "body too large": (
        "/facts/search",
        b'{"query": "q", "pad": "' + b"p" * 70000 + b'"}',
        413,
        "payload_too_large",
    ),
    "unknown operation": ("/facts/purge", b"{}", 404, "not_found"),
    "restore without a version": ("/facts/restore", b"{}", 400, "invalid_request"),
    "restore a malformed id": ("/facts/restore", b'{"version_id": "v1"}', 400, "invalid_request"),
    "versions of a number": ("/facts/versions", b'{"fact_id": 7}', 400, "invalid_request"),
    "restore an unknown version": (
        "/facts/restore",
        b'{"version_id": "{missing}"}',
        404,
        "not_found",
    ),
    "versions of an unknown fact": (
        "/facts/versions",
        b'{"fact_id": "{missing}"}',
        404,
        "not_found",
    ),
    "as of a time without a zone": (
        "/facts/search",
        b'{"query": "q", "as_of": "2026-01-01T00:00:00"}',
        400,
        "invalid_request",
    ),
    "as of no time at all": (
        "/facts/search",
        b'{"query": "q", "as_of": "last week"}',
        400,
        "invalid_request",
    ),
    "restore body too large": (
        "/facts/restore",
        b'{"version_id": "' + b"0" * 70000 + b'"}',
        413,
        "payload_too_large",
    ),
    "unknown fact": ("/facts/delete", b'{"fact_id": "{missing}"}', 404, "not_found"),
    "unknown pending item": (
        "/pending/resolve",
        b'{"pending_id": "{missing}", "choice": "keep_old"}',
        404,
        "not_found",
    ),
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


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_requests_are_refused_and_change_nothing(
    served: Served, watched: Seeded, case: str
) -> None:
    path, body, status, code = CASES[case]
    fact = watched.facts["Martin works in accounting"]  # the colleague's, not the son's
    for name, value in {
        "fact": fact,
        "son": watched.son.id,
        "conflict": watched.conflict_id,
        "ambiguity": watched.ambiguity_id,
        "missing": str(uuid.uuid4()),
    }.items():
        body = body.replace(b"{" + name.encode() + b"}", value.encode())
    response = httpx.post(
        url(served, path),
        content=body,
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
@pytest.mark.parametrize("path", ["/facts/list", "/export", "/account/delete", "/nowhere"])
def test_unauthenticated_requests(served: Served, watched: Seeded, auth: str, path: str) -> None:
    user = watched.user
    header = {
        "none": None,
        "not bearer": f"Basic {served.token(user)}",
        "garbage": "Bearer not.a.jwt",
        "forged": f"Bearer {forged_token(user)}",
        "expired": f"Bearer {mint_user_token(STATE, user, ttl=-120)}",
    }[auth]
    headers = {"Authorization": header} if header else {}
    response = httpx.post(url(served, path), json={"confirm": True}, headers=headers, timeout=30)
    assert refused(response) == (401, "unauthenticated")


def test_only_post_is_served(served: Served, watched: Seeded) -> None:
    headers = {"Authorization": f"Bearer {served.token(watched.user)}"}
    for path in ("/facts/list", "/export", "/account/delete"):
        response = httpx.get(url(served, path), headers=headers, timeout=30)
        assert refused(response) == (405, "method_not_allowed")
        response = httpx.delete(url(served, path), headers=headers, timeout=30)
        assert refused(response) == (405, "method_not_allowed")


def test_another_users_ids_are_not_found_and_nothing_changes(
    served: Served, stores: Deps, db: firestore.Client, cache: redis.Redis, watched: Seeded
) -> None:
    """Alice (watched) holds ids of Bob's rows; every use of them is 404, Bob's rows too
    stay exactly as they were."""
    bob = full_account(served, stores, db, cache, new_user())
    bobs_before = everything(db, cache, bob.user)
    bobs_fact, bobs_person = bob.facts["Martin is eight years old"], bob.son.id
    mine = watched.son.id
    attempts: list[tuple[str, dict[str, Any]]] = [
        ("/facts/get", {"fact_id": bobs_fact}),
        ("/facts/edit", {"fact_id": bobs_fact, "text": "Martin is nine"}),
        ("/facts/delete", {"fact_id": bobs_fact}),
        ("/facts/versions", {"fact_id": bobs_fact}),
        ("/facts/restore", {"version_id": bobs_fact}),
        ("/facts/list", {"subject_id": bobs_person}),
        ("/facts/search", {"query": "Martin", "subject_id": bobs_person}),
        ("/persons/update", {"person_id": bobs_person, "display_name": "Mine now"}),
        ("/persons/merge", {"keep_id": mine, "absorb_id": bobs_person}),
        ("/persons/merge", {"keep_id": bobs_person, "absorb_id": mine}),
        (
            "/persons/split",
            {
                "person_id": bobs_person,
                "new_person": {"display_name": "M"},
                "fact_ids": [bobs_fact],
            },
        ),
        (
            "/persons/split",
            {"person_id": mine, "new_person": {"display_name": "M"}, "fact_ids": [bobs_fact]},
        ),
        ("/persons/delete", {"person_id": bobs_person}),
        ("/pending/resolve", {"pending_id": bob.conflict_id, "choice": "keep_both"}),
        (
            "/pending/resolve",
            {"pending_id": watched.ambiguity_id, "choice": "person", "person_id": bobs_person},
        ),
    ]
    for path, body in attempts:
        assert refused(call(served, watched.user, path, body)) == (404, "not_found"), path
    assert bob.facts["Martin is eight years old"] not in str(ok(served, watched.user, "/export"))
    assert everything(db, cache, bob.user) == bobs_before
