"""What the stores hold, to prove a refused request changed nothing."""

from __future__ import annotations

from typing import Any

from google.cloud import firestore

from shared.adapters.keyring_local import LocalKek
from shared.adapters.postgres import Database, connect
from shared.adapters.postgres_facts import PostgresFactStore
from shared.adapters.postgres_keyring import PostgresKeyRing
from shared.config import Settings
from shared.models.memory import FactFilter


def firestore_paths(db: firestore.Client, user_id: str) -> dict[str, Any]:
    """Every document under ``users/{user_id}`` with its update time."""
    found: dict[str, Any] = {}

    def walk(ref: firestore.DocumentReference) -> None:
        for collection in ref.collections():
            for doc in collection.stream():
                found[doc.reference.path] = doc.update_time
                walk(doc.reference)

    walk(db.collection("users").document(user_id))
    return found


def postgres_counts() -> tuple[int, ...]:
    conn = connect(Settings())
    try:
        cursor = conn.cursor()
        cursor.execute(
            "SELECT (SELECT count(*) FROM facts), (SELECT count(*) FROM persons),"
            " (SELECT count(*) FROM processed_tasks)"
        )
        row = cursor.fetchone()
        assert row is not None
        return tuple(int(value) for value in row)
    finally:
        conn.close()


def facts_of(user_id: str) -> list[tuple[str, str | None]]:
    """Every fact of the user, superseded ones too, decrypted: (text, source turn id)."""
    settings = Settings()
    if not settings.local_kek_file:
        raise AssertionError("LOCAL_KEK_FILE is not set: the stack's env file must provide it")
    db = Database(settings)
    try:
        store = PostgresFactStore(db, PostgresKeyRing(db, LocalKek(settings.local_kek_file)))
        facts = store.list_facts(user_id, FactFilter(include_history=True, limit=1000))
    finally:
        db.close()
    return [(fact.text, fact.source.turn_id) for fact in facts]


def postgres_key_rows(user_id: str) -> int:
    """How many data keys the user has (0 or 1)."""
    conn = connect(Settings())
    try:
        cursor = conn.cursor()
        cursor.execute("SELECT count(*) FROM user_keys WHERE user_id = %s", (user_id,))
        row = cursor.fetchone()
        assert row is not None
        return int(row[0])
    finally:
        conn.close()
