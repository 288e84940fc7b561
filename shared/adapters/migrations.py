"""Apply ``shared/migrations/NNNN_name.sql`` files in order, each once.

Each file runs in its own transaction together with its row in
``schema_migrations(version, applied_at)``, so a failed file leaves no trace and the next run
retries it. A session-level ``pg_advisory_lock`` makes concurrent runners (two deploys) wait
for each other instead of racing. Files must not contain their own BEGIN/COMMIT.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from shared.adapters.postgres import Connection, register_vector_types

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"
# Any fixed 64-bit number, the same for every runner of this schema.
ADVISORY_LOCK_KEY = 0x6173_7369_7374_0001
_FILE_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    path: Path


def discover(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    found: dict[int, Migration] = {}
    for path in sorted(directory.glob("*.sql")):
        match = _FILE_NAME.match(path.name)
        if not match:
            raise ValueError(f"migration file name must be NNNN_name.sql: {path.name}")
        version = int(match.group(1))
        if version in found:
            raise ValueError(f"two migrations numbered {version}: {path.name}")
        found[version] = Migration(version, path.stem, path)
    return [found[v] for v in sorted(found)]


def apply_migrations(conn: Connection, directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    """Apply the pending migrations and return them; raise on the first that fails."""
    migrations = discover(directory)
    cur = conn.cursor()
    cur.execute("SELECT pg_advisory_lock(%s)", (ADVISORY_LOCK_KEY,))
    conn.commit()
    try:
        cur.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version integer PRIMARY KEY,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        conn.commit()
        applied = _applied_versions(conn)
        done: list[Migration] = []
        for migration in migrations:
            if migration.version in applied:
                continue
            _apply_one(conn, migration)
            done.append(migration)
    finally:
        conn.rollback()
        cur.execute("SELECT pg_advisory_unlock(%s)", (ADVISORY_LOCK_KEY,))
        conn.commit()
        cur.close()
    register_vector_types(conn)  # the first migration may just have created the extension
    return done


def _applied_versions(conn: Connection) -> set[int]:
    cur = conn.cursor()
    cur.execute("SELECT version FROM schema_migrations")
    versions = {int(row[0]) for row in cur.fetchall()}
    cur.close()
    conn.commit()
    return versions


def _apply_one(conn: Connection, migration: Migration) -> None:
    cur = conn.cursor()
    try:
        # No parameters: pg8000 sends the file as one simple query, many statements allowed.
        cur.execute(migration.path.read_text())
        cur.execute("INSERT INTO schema_migrations (version) VALUES (%s)", (migration.version,))
        conn.commit()
    except BaseException:
        conn.rollback()
        raise
    finally:
        cur.close()
