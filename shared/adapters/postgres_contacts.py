"""``ContactStore`` on PostgreSQL: the people a user mentions (table ``persons``).

Names, aliases and descriptors are ciphertext under the user's data key; ``name_hashes``
holds a keyed hash of each normalised name, so ``find_by_name`` is one indexed look-up that
never needs the name in clear. Listing sorts after decryption (the database cannot order
ciphertext). Every statement filters by ``user_id``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from shared.adapters.fact_rules import is_uuid, merged_person, sort_persons
from shared.adapters.postgres import Cursor, Database, constraints_as_rejected
from shared.adapters.postgres_memory_rows import (
    INSERT_PERSON_SQL,
    PERSON_COLUMNS,
    person_from_row,
    person_insert_args,
    person_secrets,
)
from shared.errors import DataRejected
from shared.models.memory import Person
from shared.ports import KeyRing, UserCipher


class PostgresContactStore:
    def __init__(self, db: Database, keys: KeyRing) -> None:
        self._db = db
        self._keys = keys

    def list_persons(self, user_id: str) -> list[Person]:
        return self._select(user_id, "TRUE", [])

    def get_person(self, user_id: str, person_id: str) -> Person | None:
        if not is_uuid(person_id):
            return None
        found = self._select(user_id, "id = %s", [person_id])
        return found[0] if found else None

    def find_by_name(self, user_id: str, name: str) -> list[Person]:
        with self._db.transaction() as cur:
            cur.execute("SELECT EXISTS (SELECT 1 FROM persons WHERE user_id = %s)", (user_id,))
            if not cur.fetchone()[0]:
                return []  # no key is created for a user who has nothing
        digest = self._keys.cipher_for(user_id).name_hash(name)
        return self._select(user_id, "name_hashes @> ARRAY[%s::bytea]", [digest])

    def add_person(self, person: Person) -> None:
        """Idempotent on ``person.id``: adding the same person again changes nothing."""
        if not is_uuid(person.id):
            raise DataRejected(f"not a uuid: {person.id!r}")
        cipher = self._keys.cipher_for(person.user_id)
        with constraints_as_rejected(), self._db.transaction() as cur:
            cur.execute(INSERT_PERSON_SQL, person_insert_args(cipher, person))

    def update_person(self, person: Person, unchanged_since: datetime | None = None) -> bool:
        if not is_uuid(person.id):
            return False
        cipher = self._keys.cipher_for(person.user_id)
        with constraints_as_rejected(), self._db.transaction() as cur:
            return _update(cur, cipher, person, unchanged_since)

    def merge_persons(self, user_id: str, keep_id: str, absorb_id: str) -> bool:
        """Facts of ``absorb_id`` move to ``keep_id`` (taking its role as their relation);
        its names become aliases of ``keep_id``; its descriptors fill the gaps of
        ``keep_id``'s. One transaction; False unless both are the user's, and distinct."""
        if keep_id == absorb_id or not (is_uuid(keep_id) and is_uuid(absorb_id)):
            return False
        cipher = self._keys.cipher_for(user_id)
        with constraints_as_rejected(), self._db.transaction() as cur:
            cur.execute(
                f"SELECT {PERSON_COLUMNS} FROM persons WHERE user_id = %s AND id IN (%s, %s)"
                " ORDER BY id FOR UPDATE",
                (user_id, keep_id, absorb_id),
            )
            found = {p.id: p for p in (person_from_row(cipher, r) for r in cur.fetchall())}
            if len(found) != 2:
                return False
            merged = merged_person(found[keep_id], found[absorb_id])
            cur.execute(
                "UPDATE facts SET subject_entity_id = %s, relation_to_user = %s,"
                " updated_at = now() WHERE user_id = %s AND subject_entity_id = %s",
                (keep_id, merged.role_to_user, user_id, absorb_id),
            )
            cur.execute("DELETE FROM persons WHERE user_id = %s AND id = %s", (user_id, absorb_id))
            _update(cur, cipher, merged)
        return True

    def delete_person(self, user_id: str, person_id: str) -> bool:
        """The facts about the person go with it (the foreign key cascades)."""
        if not is_uuid(person_id):
            return False
        with self._db.transaction() as cur:
            cur.execute("DELETE FROM persons WHERE user_id = %s AND id = %s", (user_id, person_id))
            return cur.rowcount > 0

    def _select(self, user_id: str, where: str, args: list[Any]) -> list[Person]:
        with self._db.transaction() as cur:
            cur.execute(
                f"SELECT {PERSON_COLUMNS} FROM persons WHERE user_id = %s AND {where}",
                [user_id, *args],
            )
            rows: Sequence[Sequence[Any]] = cur.fetchall()
        if not rows:
            return []
        cipher = self._keys.cipher_for(user_id)
        return sort_persons([person_from_row(cipher, row) for row in rows])


def _update(
    cur: Cursor, cipher: UserCipher, person: Person, unchanged_since: datetime | None = None
) -> bool:
    """With ``unchanged_since``: only if ``updated_at`` is still that (compare-and-set)."""
    cur.execute(
        "UPDATE persons SET avatar_id = %s, role_to_user = %s, display_name_enc = %s,"
        " aliases_enc = %s, descriptors_enc = %s, name_hashes = %s::bytea[],"
        " updated_at = GREATEST(now(), updated_at + interval '1 microsecond')"
        " WHERE user_id = %s AND id = %s"
        " AND (%s::timestamptz IS NULL OR updated_at = %s::timestamptz)",
        [
            person.avatar_id,
            person.role_to_user,
            *person_secrets(cipher, person),
            person.user_id,
            person.id,
            unchanged_since,
            unchanged_since,
        ],
    )
    return cur.rowcount > 0
