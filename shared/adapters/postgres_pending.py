"""``PendingStore`` on PostgreSQL (table ``pending_items``).

Items are written by ``PostgresFactStore.apply_extraction`` in the task's transaction; here
they are read and resolved. The mention, candidates, proposed person and held-back facts are
one encrypted JSON payload. ``resolve_pending`` is a conditional UPDATE (``resolved_at IS
NULL``), so of two concurrent answers exactly one gets the item.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from shared.adapters.fact_rules import is_uuid
from shared.adapters.postgres import Database
from shared.adapters.postgres_memory_rows import PENDING_COLUMNS, pending_from_row
from shared.models.memory import PendingItem
from shared.ports import KeyRing


class PostgresPendingStore:
    def __init__(self, db: Database, keys: KeyRing) -> None:
        self._db = db
        self._keys = keys

    def list_pending(self, user_id: str, chat_id: str | None = None) -> list[PendingItem]:
        """The user's unresolved items, oldest first; only this chat's when ``chat_id``."""
        where, args = "user_id = %s AND resolved_at IS NULL", [user_id]
        if chat_id is not None:
            where += " AND chat_id = %s"
            args.append(chat_id)
        return self._query(
            f"SELECT {PENDING_COLUMNS} FROM pending_items WHERE {where} ORDER BY created_at, id",
            args,
        )

    def get_pending(self, user_id: str, item_id: str) -> PendingItem | None:
        if not is_uuid(item_id):
            return None
        found = self._query(
            f"SELECT {PENDING_COLUMNS} FROM pending_items WHERE user_id = %s AND id = %s",
            [user_id, item_id],
        )
        return found[0] if found else None

    def resolve_pending(self, user_id: str, item_id: str, now: datetime) -> PendingItem | None:
        if not is_uuid(item_id):
            return None
        found = self._query(
            "UPDATE pending_items SET resolved_at = %s"
            " WHERE user_id = %s AND id = %s AND resolved_at IS NULL"
            f" RETURNING {PENDING_COLUMNS}",
            [now, user_id, item_id],
        )
        return found[0] if found else None

    def _query(self, sql: str, args: list[Any]) -> list[PendingItem]:
        with self._db.transaction() as cur:
            cur.execute(sql, args)
            rows: Sequence[Sequence[Any]] = cur.fetchall()
        if not rows:
            return []
        cipher = self._keys.cipher_for(str(rows[0][1]))  # every statement filters by user
        return [pending_from_row(cipher, row) for row in rows]
