"""The ``erased_users`` tombstone (``shared/migrations/0003_erasures.sql``) and the per-user
lock that erasure and every late writer (extraction, the execution memory) take in turn, so
that work queued before an erasure brings none of the user's data back."""

from __future__ import annotations

import hashlib
from datetime import datetime

from shared.adapters.postgres import Cursor


def user_hash(user_id: str) -> bytes:
    return hashlib.sha256(f"erased-user:{user_id}".encode()).digest()


def lock_user(cur: Cursor, user_id: str) -> None:
    # Erasure and a late writer of one user take turns: neither sees the other half done.
    cur.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 4))", (user_id,))


def erased_since(cur: Cursor, user_id: str, issued_at: datetime) -> bool:
    """Under the user's lock: was the account erased at or after ``issued_at``?"""
    lock_user(cur, user_id)
    cur.execute("SELECT erased_at FROM erased_users WHERE user_hash = %s", (user_hash(user_id),))
    row = cur.fetchone()
    return row is not None and issued_at <= row[0]
