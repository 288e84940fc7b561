"""The ``erased_users`` tombstone (``shared/migrations/0003_erasures.sql``) and the per-user
lock that erasure and every late writer (extraction, the execution memory) take in turn, so
that work queued before an erasure brings none of the user's data back."""

from __future__ import annotations

import hashlib
from datetime import datetime

from shared.adapters.postgres import Cursor


def user_hash(user_id: str) -> bytes:
    return hashlib.sha256(f"erased-user:{user_id}".encode()).digest()


def lock_user(cur: Cursor, user_id: str, shared: bool = False) -> None:
    # An erasure (exclusive) and the user's other work (shared: ``hold_user`` and each late
    # write) take turns: neither sees the other half done. Late writers do not wait for
    # each other.
    kind = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
    cur.execute(f"SELECT {kind}(hashtextextended(%s, 4))", (user_id,))


def erased_since(cur: Cursor, user_id: str, issued_at: datetime, locked: bool = False) -> bool:
    """Under the user's lock (taken here, shared, unless the caller already holds it): was the
    account erased at or after ``issued_at``?"""
    if not locked:
        lock_user(cur, user_id, shared=True)
    cur.execute("SELECT erased_at FROM erased_users WHERE user_hash = %s", (user_hash(user_id),))
    row = cur.fetchone()
    return row is not None and issued_at <= row[0]
