"""Statements prepared once per pooled connection (``postgres_prepared``): they answer as a
cursor would, each connection prepares a statement once, the transaction's settings hold
for it and end with it, and an error leaves the connection usable. Real only."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from pg8000.exceptions import DatabaseError
from pgvector import Vector

from shared.adapters import postgres_prepared
from shared.adapters.postgres import Database, sqlstate
from shared.adapters.postgres_prepared import Prepared, vector_text
from shared.config import Settings

pytestmark = [pytest.mark.stack, pytest.mark.usefixtures("stack_env")]

SERIES = "SELECT g, g * %s::int, %s::text FROM generate_series(1, %s::int) g ORDER BY g"


@pytest.fixture
def db(pg_settings: Settings, database: Database) -> Iterator[Database]:
    """A pool of one connection of the test's own (after ``database``: the schema exists),
    so every transaction below runs on the same connection."""
    pool = Database(pg_settings, max_idle=1)
    yield pool
    pool.close()


def prepared_here(db: Database) -> list[str]:
    with db.transaction() as cur:
        cur.execute("SELECT statement FROM pg_prepared_statements ORDER BY statement")
        return [str(row[0]) for row in cur.fetchall()]


def test_a_prepared_statement_answers_as_a_cursor_and_is_prepared_once(db: Database) -> None:
    with db.transaction() as cur:
        cur.execute(SERIES, [7, "x", 3])
        expected = [list(row) for row in cur.fetchall()]
    for _ in range(3):  # the same pooled connection each time
        with db.connection() as conn:
            assert Prepared(conn).rows(SERIES, [7, "x", 3]) == expected
    with db.connection() as conn:
        assert Prepared(conn).rows(SERIES, [2, "y", 1]) == [[1, 2, "y"]]
    assert len([s for s in prepared_here(db) if "generate_series" in s]) == 1


def test_the_settings_hold_for_the_transaction_only(db: Database) -> None:
    read = "SELECT current_setting('hnsw.ef_search'), current_setting('plan_cache_mode'), %s::int"
    with db.connection() as conn:
        rows = Prepared(conn, ["SET LOCAL hnsw.ef_search = 321"]).rows(read, [1])
    assert rows == [["321", "force_custom_plan", 1]]
    with db.connection() as conn:
        assert Prepared(conn).rows(read, [2])[0][0] != "321"


def test_an_error_rolls_back_and_the_connection_still_serves(db: Database) -> None:
    divide = "SELECT 1 / %s::int"
    with pytest.raises(DatabaseError), db.connection() as conn:
        Prepared(conn).rows(divide, [0])
    with db.connection() as conn:
        assert Prepared(conn).rows(divide, [1]) == [[1]]


def test_refused_settings_roll_back_and_the_connection_still_serves(db: Database) -> None:
    with pytest.raises(DatabaseError), db.connection() as conn:
        Prepared(conn, ["SET LOCAL no_such_setting_without_a_dot = 1"]).rows("SELECT %s::int", [1])
    with db.connection() as conn:
        assert Prepared(conn, ["SET LOCAL jit = off"]).rows("SELECT %s::int", [2]) == [[2]]


def test_a_prepared_transaction_commits_what_it_changed(db: Database, database: Database) -> None:
    with db.transaction() as cur:
        cur.execute("CREATE TABLE prepared_probe (n int)")
    with db.connection() as conn:
        assert Prepared(conn).rows("INSERT INTO prepared_probe VALUES (%s) RETURNING n", [5]) == [
            [5]
        ]
    with database.transaction() as cur:  # another connection sees it
        cur.execute("SELECT count(*) FROM prepared_probe WHERE n = 5")
        seen = cur.fetchone()[0]
        cur.execute("DROP TABLE prepared_probe")
    assert seen == 1


def test_a_statement_gone_stale_is_refused_once_then_prepared_again(
    db: Database, database: Database
) -> None:
    """A table changed under a prepared ``SELECT *`` (a migration while the pool lives): the
    server refuses the old statement (0A000), and the next call prepares it afresh."""
    with database.transaction() as cur:
        cur.execute("CREATE TABLE prepared_stale (n int)")
        cur.execute("INSERT INTO prepared_stale VALUES (1)")
    read = "SELECT * FROM prepared_stale WHERE n = %s"
    try:
        with db.connection() as conn:
            assert Prepared(conn).rows(read, [1]) == [[1]]
        with database.transaction() as cur:
            cur.execute("ALTER TABLE prepared_stale ADD COLUMN m int DEFAULT 2")
        with pytest.raises(DatabaseError) as refused, db.connection() as conn:
            Prepared(conn).rows(read, [1])
        assert sqlstate(refused.value) == "0A000"
        with db.connection() as conn:
            assert Prepared(conn).rows(read, [1]) == [[1, 2]]
    finally:
        with database.transaction() as cur:
            cur.execute("DROP TABLE prepared_stale")


def test_past_the_limit_statements_run_unprepared(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres_prepared, "MAX_PREPARED", 1)
    for n in (1, 2):
        with db.connection() as conn:
            assert Prepared(conn).rows(f"SELECT {n} + %s::int", [1]) == [[n + 1]]
    assert len([s for s in prepared_here(db) if "+ $1::int" in s]) == 1


@pytest.mark.parametrize("scale", [1e-6, 1e-2, 1.0, 1e3])
def test_the_vector_text_reads_back_as_the_vector_pgvector_would_send(
    database: Database, scale: float
) -> None:
    values = (np.random.default_rng(int(scale * 1e6)).standard_normal(768) * scale).tolist()
    with database.transaction() as cur:
        cur.execute(
            "SELECT %s::vector = %s::vector, %s::vector = %s::vector",
            [vector_text(values), Vector(values).to_text(), vector_text(values),
             Vector([v * 1.0000001 for v in values]).to_text()],
        )  # fmt: skip
        assert list(cur.fetchone()) == [True, False]
