"""What the stores hold, to prove a refused request changed nothing."""

from __future__ import annotations

from typing import Any

from google.cloud import firestore

from shared.adapters.postgres import connect
from shared.config import Settings


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
    conn = connect(Settings())
    try:
        cursor = conn.cursor()
        cursor.execute(
            "SELECT text, source_turn_id FROM facts WHERE user_id = %s ORDER BY created_at",
            (user_id,),
        )
        return [(str(text), turn) for text, turn in cursor.fetchall()]
    finally:
        conn.close()
