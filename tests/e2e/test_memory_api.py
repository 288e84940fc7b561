"""The memory function's /v1 resources over HTTP, as docs/openapi.yaml describes them, on the
real stack: facts, persons, pending items, the export and the account's deletion. Seeding
and calls: ``tests/e2e/memory_kit.py``; refusals: ``test_memory_refusals.py``."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
import redis
from google.cloud import firestore

from shared.deps import Deps
from tests.e2e.conftest import Served, function_without_redis
from tests.e2e.memory_kit import (
    Seeded,
    about,
    call,
    everything,
    full_account,
    new_user,
    ok,
    pending,
    persons,
    pg_rows,
    redis_keys,
    refused,
    search,
    seed,
    texts,
)
from tests.e2e.snapshots import firestore_paths

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


@pytest.fixture
def alice(stores: Deps) -> Seeded:
    return seed(stores, new_user())


@pytest.fixture
def bob(stores: Deps) -> Seeded:
    return seed(stores, new_user())


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
    assert [(m["role"], m["kind"]) for m in chat["messages"]] == [
        ("user", "text"), ("assistant", "text"),
    ]  # fmt: skip
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
