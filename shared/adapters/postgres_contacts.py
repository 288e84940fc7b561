"""``ContactStore`` on PostgreSQL: the people a user mentions (table ``persons``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pg8000.exceptions import DatabaseError

from shared.adapters.postgres import Database, as_rejected
from shared.models.domain import Person


class PostgresContactStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    def list_persons(self, user_id: str) -> list[Person]:
        with self._db.transaction() as cur:
            cur.execute(
                "SELECT id, user_id, display_name, role_to_user, aliases FROM persons"
                " WHERE user_id = %s ORDER BY display_name, id",
                (user_id,),
            )
            rows = cur.fetchall()
        return [_person(row) for row in rows]

    def add_person(self, person: Person) -> None:
        """Idempotent on ``person.id``: adding the same person again changes nothing."""
        try:
            with self._db.transaction() as cur:
                cur.execute(
                    "INSERT INTO persons (id, user_id, display_name, role_to_user, aliases)"
                    " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING",
                    (
                        person.id,
                        person.user_id,
                        person.display_name,
                        person.role_to_user,
                        list(person.aliases),
                    ),
                )
        except DatabaseError as exc:
            rejected = as_rejected(exc)
            if rejected is None:
                raise
            raise rejected from exc


def _person(row: Sequence[Any]) -> Person:
    person_id, user_id, display_name, role_to_user, aliases = row
    return Person(
        id=str(person_id),
        user_id=user_id,
        display_name=display_name,
        role_to_user=role_to_user,
        aliases=list(aliases or []),
    )
