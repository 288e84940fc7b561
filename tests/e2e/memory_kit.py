"""What the memory function's e2e tests share: the stores read and written directly,
seeding (what extraction would have stored, encrypted under the user's key), and calls to
the function's /v1 resources."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
import redis
from google.cloud import firestore

from shared.adapters.postgres import Database, connect
from shared.config import Settings
from shared.deps import Deps
from shared.fakes.scripted_llm import HashEmbedder
from shared.models.memory import ExtractionChanges, FactDraft, FactFilter, PendingItem, Person
from tests.e2e.conftest import Served
from tests.e2e.snapshots import firestore_paths

SETTINGS = Settings()
EMBEDDER = HashEmbedder(dimension=768)  # what the fake Vertex endpoint embeds with
EVERY_FACT = FactFilter(include_history=True, limit=1000)


@contextmanager
def open_stores() -> Iterator[Deps]:
    database = Database(SETTINGS)
    try:
        yield Deps(SETTINGS, _database=database)
    finally:
        database.close()


@contextmanager
def open_cache() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(SETTINGS.redis_url)
    try:
        yield client
    finally:
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


def chat_with(served: Served, user: str) -> str:
    body = {"message": "Hello", "client_message_id": f"hello-{uuid.uuid4().hex[:8]}"}
    response = served.say(user, body)
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
