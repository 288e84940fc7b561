"""PostgreSQL specifics with no fake counterpart: the schema's own guards, pgvector types,
migrations and the connection pool. Real only."""

from __future__ import annotations

import os
import select
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from pg8000.exceptions import DatabaseError
from pgvector import Vector

from shared.adapters.migrations import apply_migrations, discover
from shared.adapters.postgres import (
    Connection,
    Database,
    connect,
    sqlstate,
)
from shared.config import Settings
from shared.errors import DependencyUnavailable
from testkit.faults import wait_until
from tests.contract.conftest import fresh_database, unique

pytestmark = [pytest.mark.stack, pytest.mark.usefixtures("stack_env")]

# Straight SQL, bypassing the adapter: the schema itself must refuse bad rows.
INSERT_FACT = (
    "INSERT INTO facts (id, user_id, subject_entity_id, relation_to_user, text_enc, type,"
    " confidence, scope, durability, sensitivity, valid_from, embedding, embedding_model,"
    " embedding_dim, idempotency_hash, last_seen_at, created_at, updated_at)"
    " VALUES (gen_random_uuid(), %s, NULL, %s, '\\x00', 'Other', 0.5, 'avatar', 'durable',"
    " 'low', now(), %s, 'm', %s, convert_to(%s, 'UTF8'), now(), now(), now())"
)


def with_key(cur: Connection, user_id: str) -> str:
    """Facts belong to a user with a data key (foreign key): give the user one."""
    cur.execute(
        "INSERT INTO user_keys (user_id, wrapped_key, kek_id) VALUES (%s, '\\x00', 'test')",
        (user_id,),
    )
    return user_id


@pytest.fixture
def conn(pg_settings: Settings, database: Database) -> Iterator[Connection]:
    connection = connect(pg_settings)  # after ``database``: the schema exists
    yield connection
    connection.close()


def test_the_database_refuses_an_orphan_fact(conn: Connection) -> None:
    cur = conn.cursor()
    with pytest.raises(DatabaseError) as refused:
        user = with_key(cur, unique("user"))
        cur.execute(INSERT_FACT, (user, "friend", Vector([1, 0]), 2, unique("k")))
    conn.rollback()
    assert sqlstate(refused.value) == "23514"
    assert "facts_subject_or_self" in str(refused.value)


def test_the_database_refuses_a_wrong_embedding_dimension(conn: Connection) -> None:
    cur = conn.cursor()
    with pytest.raises(DatabaseError) as refused:
        user = with_key(cur, unique("user"))
        cur.execute(INSERT_FACT, (user, "self", Vector([1, 0, 0]), 2, unique("k")))
    conn.rollback()
    assert "facts_embedding_dim" in str(refused.value)


def test_vectors_round_trip_and_use_the_per_dimension_index(conn: Connection) -> None:
    cur = conn.cursor()
    user = with_key(cur, unique("user"))
    for i in range(3):
        embedding = Vector([1.0 if j == i else 0.0 for j in range(768)])
        cur.execute(INSERT_FACT, (user, "self", embedding, 768, f"k{i}"))
    cur.execute("SELECT embedding FROM facts WHERE user_id = %s ORDER BY idempotency_hash", (user,))
    first = cur.fetchone()[0]
    assert isinstance(first, Vector) and first.to_list()[:2] == [1.0, 0.0]
    query = (
        "SELECT convert_from(idempotency_hash, 'UTF8') FROM facts"
        " WHERE embedding_dim = 768 AND user_id = %s"
        " ORDER BY embedding::vector(768) <=> %s LIMIT 1"
    )
    probe = Vector([0.0, 0.9] + [0.0] * 766)
    # The cast and predicate (current facts) match the partial HNSW index; a per-user btree
    # wins at 3 rows, so the plan is checked on the query without the user filter.
    cur.execute("SET LOCAL enable_seqscan = off")
    cur.execute(
        "EXPLAIN SELECT id FROM facts WHERE embedding_dim = 768 AND valid_to IS NULL"
        " ORDER BY embedding::vector(768) <=> %s::vector(768) LIMIT 1",
        (probe,),
    )
    assert "facts_embedding_768_idx" in " ".join(row[0] for row in cur.fetchall())
    cur.execute(query, (user, probe))
    assert cur.fetchone()[0] == "k1"
    conn.rollback()


def test_migrations_apply_once(conn: Connection) -> None:
    assert apply_migrations(conn) == []
    cur = conn.cursor()
    cur.execute("SELECT version FROM schema_migrations ORDER BY version")
    assert [row[0] for row in cur.fetchall()] == [m.version for m in discover()]
    conn.rollback()


def test_concurrent_migration_runners_do_not_race(settings: Settings) -> None:
    results: list[list[int]] = []
    errors: list[BaseException] = []

    def run(target: Settings) -> None:
        c = connect(target)
        try:
            results.append([m.version for m in apply_migrations(c)])
        except BaseException as exc:  # collected for the assertion below
            errors.append(exc)
        finally:
            c.close()

    with fresh_database(settings) as target:
        threads = [threading.Thread(target=run, args=(target,)) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    assert errors == []
    assert sorted(results) == [[], [m.version for m in discover()]]


def test_a_failing_migration_leaves_no_trace_and_is_retried(
    settings: Settings, tmp_path: Path
) -> None:
    (tmp_path / "0001_first.sql").write_text("CREATE TABLE first (id int);")
    (tmp_path / "0002_broken.sql").write_text(
        "CREATE TABLE second (id int); SELECT no_such_function();"
    )
    with fresh_database(settings) as target:
        conn = connect(target)
        try:
            with pytest.raises(DatabaseError):
                apply_migrations(conn, tmp_path)
            (tmp_path / "0002_broken.sql").write_text("CREATE TABLE second (id int);")
            assert [m.name for m in apply_migrations(conn, tmp_path)] == ["0002_broken"]
        finally:
            conn.close()


def test_a_broken_idle_connection_is_replaced(pg_settings: Settings, database: Database) -> None:
    db = Database(pg_settings, ping_after_idle_seconds=0)
    try:
        pid = _backend_pid(db)
        _terminate(pg_settings, pid)
        assert _backend_pid(db) != pid  # pinged, found dead, reconnected: no error
    finally:
        db.close()


def test_a_connection_lost_mid_use_is_unavailable_then_recovers(
    pg_settings: Settings, database: Database
) -> None:
    db = Database(pg_settings, ping_after_idle_seconds=3600)
    try:
        pid = _backend_pid(db)
        with pytest.raises(DependencyUnavailable), db.transaction() as cur:
            _terminate(pg_settings, pid)
            cur.execute("SELECT 1")
        assert _backend_pid(db) != pid
    finally:
        db.close()


def test_an_idle_connection_the_server_closed_is_replaced_without_an_error(
    pg_settings: Settings, database: Database
) -> None:
    """A restarted server says goodbye on every idle connection: none is used again."""
    opened: list[Connection] = []

    def opening() -> Connection:
        opened.append(connect(pg_settings))
        return opened[-1]

    db = Database(pg_settings, factory=opening, ping_after_idle_seconds=3600)  # no ping
    try:
        pid = _backend_pid(db)
        idle = cast(Any, opened[0])._usock
        _terminate(pg_settings, pid)
        assert wait_until(lambda: bool(select.select([idle], [], [], 0)[0]), 30)
        assert _backend_pid(db) != pid
    finally:
        db.close()


def test_a_forked_process_opens_its_own_connections(
    pg_settings: Settings, database: Database
) -> None:
    """gunicorn forks the worker from the master that connected while warming up: the worker
    must not talk over the master's session, which then still works."""
    db = Database(pg_settings, ping_after_idle_seconds=3600)
    try:
        parents = _backend_pid(db)  # now idle in the pool the child inherits
        read, write = os.pipe()
        child = os.fork()
        if child == 0:  # pragma: no cover - runs in the child, which reports through the pipe
            try:
                answer = str(_backend_pid(db)).encode()
            except BaseException as exc:
                answer = repr(exc).encode()
            os.write(write, answer)
            os._exit(0)
        os.close(write)
        with os.fdopen(read, "rb") as pipe:
            childs = pipe.read().decode()
        os.waitpid(child, 0)
        assert childs.isdigit(), childs
        assert int(childs) != parents
        assert _backend_pid(db) == parents  # the parent's session was left alone
    finally:
        db.close()


def test_connect_fails_as_unavailable_when_nothing_listens(settings: Settings) -> None:
    dead = settings.model_copy(update={"database_url": "postgresql://u@127.0.0.1:1/db"})
    with pytest.raises(DependencyUnavailable):
        connect(dead, timeout=2)


def _backend_pid(db: Database) -> int:
    with db.transaction() as cur:
        cur.execute("SELECT pg_backend_pid()")
        return int(cur.fetchone()[0])


def _terminate(settings: Settings, pid: int) -> None:
    admin = connect(settings)
    try:
        cur = admin.cursor()
        cur.execute("SELECT pg_terminate_backend(%s)", (pid,))
        admin.commit()
    finally:
        admin.close()


def test_connections_send_small_queries_at_once(conn: Connection) -> None:
    """Nagle's algorithm off: a query with a vector parameter must not wait ~40 ms for an ACK."""
    sock = cast(Any, conn)._usock
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
