"""PostgreSQL connections (pg8000 DB-API) and a tiny per-instance pool.

``connect(settings)`` opens one connection: straight to ``DATABASE_URL`` when it is set
(local stack, CI), otherwise through the Cloud SQL Python Connector with IAM database
authentication over the private IP. Nothing connects at import time.

pgvector: ``pgvector.pg8000.register_vector`` needs pg8000's *native* connection (it calls
``conn.run``), but pg8000.dbapi and the connector hand out DB-API connections. Both kinds
inherit ``register_in_adapter``/``register_out_adapter`` from pg8000's ``CoreConnection``,
so ``register_vector_types`` looks the type oids up with a cursor and registers the same
adapters pgvector does.
"""

from __future__ import annotations

import functools
import os
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext, suppress
from typing import Any, Protocol, cast
from urllib.parse import unquote, urlsplit

import numpy as np
import numpy.typing as npt
import pg8000.dbapi
from pg8000.exceptions import DatabaseError, InterfaceError
from pgvector import HalfVector, SparseVector, Vector

from shared.adapters.breaker import CircuitBreaker
from shared.config import Settings
from shared.errors import ConfigurationError, DataRejected, DependencyUnavailable


class Cursor(Protocol):
    rowcount: int

    def execute(self, operation: str, args: Any = ...) -> None: ...
    def fetchone(self) -> Any: ...
    def fetchall(self) -> Any: ...
    def close(self) -> None: ...


class Connection(Protocol):
    def cursor(self) -> Cursor: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...
    def close(self) -> None: ...


# SQLSTATE classes after which the session is gone: connection exception, operator intervention.
_BROKEN_SQLSTATE_PREFIXES = ("08", "57P")
_BROKEN_MESSAGES = {"network error", "connection is closed", "communication error"}


def is_connection_failure(exc: BaseException) -> bool:
    if isinstance(exc, OSError | TimeoutError):
        return True
    if isinstance(exc, InterfaceError):
        return isinstance(exc.__cause__, OSError) or str(exc) in _BROKEN_MESSAGES
    if isinstance(exc, DatabaseError) and exc.args and isinstance(exc.args[0], dict):
        return str(exc.args[0].get("C", "")).startswith(_BROKEN_SQLSTATE_PREFIXES)
    return False


def sqlstate(exc: BaseException) -> str | None:
    if isinstance(exc, DatabaseError) and exc.args and isinstance(exc.args[0], dict):
        code = exc.args[0].get("C")
        return str(code) if code else None
    return None


# check, foreign key, not null, value too long, malformed value (e.g. a uuid that is not one)
_REJECTED_SQLSTATES = {"23514", "23503", "23502", "22001", "22P02"}


def as_rejected(exc: DatabaseError) -> DataRejected | None:
    if sqlstate(exc) not in _REJECTED_SQLSTATES:
        return None
    detail = exc.args[0]
    return DataRejected(f"{detail.get('C')}: {detail.get('M')} {detail.get('n', '')}".strip())


@contextmanager
def constraints_as_rejected() -> Iterator[None]:
    """Raise ``DataRejected`` for a row a constraint refused; other errors pass unchanged."""
    try:
        yield
    except DatabaseError as exc:
        rejected = as_rejected(exc)
        if rejected is None:
            raise
        raise rejected from exc


def parse_database_url(url: str) -> dict[str, Any]:
    """``postgresql://user:password@host:port/dbname`` -> pg8000 ``connect`` keywords."""
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres") or not parts.username:
        raise ConfigurationError("DATABASE_URL must look like postgresql://user@host:port/db")
    database = unquote(parts.path.lstrip("/"))
    return {
        "user": unquote(parts.username),
        "password": unquote(parts.password) if parts.password else None,
        "host": parts.hostname or "localhost",
        "port": parts.port or 5432,
        "database": database or None,
    }


def as_vector(value: Any, half: bool = False) -> npt.NDArray[np.float32]:
    """A ``vector`` column as read: pgvector's binary form (``vector_send(col)``, or with
    ``half`` ``halfvec_send(col::halfvec)``; either crosses the wire ten times faster than
    the text form), a ``Vector`` or an array."""
    if isinstance(value, bytes | bytearray | memoryview):
        dtype = ">f2" if half else ">f4"
        return np.frombuffer(bytes(value), dtype=dtype, offset=4).astype(np.float32)
    if isinstance(value, Vector):
        value = value.to_numpy()
    return np.asarray(value, dtype=np.float32)


def register_vector_types(conn: Connection) -> bool:
    """Teach this connection pgvector's types; False while the extension is not installed."""
    cur = conn.cursor()
    cur.execute(
        "SELECT typname, oid FROM pg_type WHERE oid IN "
        "(to_regtype('vector'), to_regtype('halfvec'), to_regtype('sparsevec'))"
    )
    type_oids = {str(name): int(oid) for name, oid in cur.fetchall()}
    cur.close()
    conn.rollback()  # the look-up opened a transaction; leave the connection idle
    if "vector" not in type_oids:
        return False
    core = cast(Any, conn)  # the adapter registry lives on pg8000's CoreConnection
    for name, typ in (("vector", Vector), ("halfvec", HalfVector), ("sparsevec", SparseVector)):
        if name in type_oids:
            core.register_out_adapter(typ, lambda v: v.to_text())
            core.register_in_adapter(type_oids[name], typ.from_text)
    core.register_out_adapter(np.ndarray, lambda v: Vector(v).to_text())
    return True


def connect(settings: Settings, timeout: float = 30.0) -> Connection:
    """Open one connection with pgvector's types registered (when the extension exists)."""
    try:
        if settings.database_url:
            conn = cast(
                Connection,
                pg8000.dbapi.connect(
                    **parse_database_url(settings.database_url),
                    timeout=timeout,
                    application_name="assistant",
                ),
            )
        else:
            conn = _connect_cloud_sql(settings)
    except (OSError, InterfaceError) as exc:
        raise DependencyUnavailable(f"postgres unreachable: {exc}") from exc
    try:
        disable_nagle(conn)
        register_vector_types(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def disable_nagle(conn: Connection) -> None:
    """TCP_NODELAY on the connection's socket. pg8000 leaves Nagle's algorithm on, and it
    writes a message group in pieces when one is larger than its buffer (a 768-dimension
    vector parameter is ~10 KB): the last piece then waits for the server's delayed ACK,
    40 ms on Linux, on every such query (measured: p50 47 ms -> 5 ms for a vector search)."""
    sock = getattr(conn, "_usock", None)  # pg8000's socket, TLS-wrapped or not
    if isinstance(sock, socket.socket) and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


_connector: Any = None  # one Connector per process: it caches certificates and metadata
_connector_lock = threading.Lock()


def _connect_cloud_sql(settings: Settings) -> Connection:
    global _connector  # noqa: PLW0603 - built lazily, never at import
    if not settings.cloud_sql_instance or not settings.db_iam_user:
        raise ConfigurationError("set DATABASE_URL, or CLOUD_SQL_INSTANCE and DB_IAM_USER")
    # Imported here: it pulls in aiohttp, which local and test runs never need.
    from google.cloud.sql.connector import Connector, IPTypes

    with _connector_lock:
        if _connector is None:
            # Lazy refresh: background refreshes starve when serverless CPU is throttled.
            _connector = Connector(refresh_strategy="lazy")
    return cast(
        Connection,
        _connector.connect(
            settings.cloud_sql_instance,
            "pg8000",
            user=settings.db_iam_user,
            db=settings.db_name,
            enable_iam_auth=True,
            ip_type=IPTypes.PRIVATE,
        ),
    )


class Database:
    """A few reused connections per instance; a connection idle for a while is pinged
    before use and replaced if it broke (Cloud SQL and NATs drop idle sessions).

    Outages: a connection that fails drops every idle one with it (a restarted server
    closed them all), an idle connection with unread bytes (the server's goodbye) is
    thrown away unused, and calls go through the instance's circuit breaker for
    PostgreSQL (``breaker``), so a hung server costs one timeout per incident.

    A process forked from the one that opened the connections (gunicorn's worker, from the
    master that warmed up) opens its own: the inherited ones are the parent's sessions, and two
    processes writing to one session break it for both.

    Opens nothing until the first transaction; ``factory`` replaces ``connect(settings)``.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        factory: Callable[[], Connection] | None = None,
        max_idle: int = 3,  # a recall holds two at once: its facts and its sessions
        ping_after_idle_seconds: float = 30.0,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        self._connect = factory or functools.partial(connect, settings)
        self._max_idle = max_idle
        self._ping_after = ping_after_idle_seconds
        self._idle: list[tuple[Connection, float]] = []
        self._lock = threading.Lock()
        self._breaker = breaker
        self._pid = os.getpid()

    @contextmanager
    def transaction(self) -> Iterator[Cursor]:
        """Yield a cursor in a transaction; commit on success, roll back on error."""
        with self._breaker.guard() if self._breaker else nullcontext(), self._work() as work:
            yield work[1]

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        """A transaction as ``transaction`` runs it, on the connection itself (for
        ``postgres_prepared.Prepared``, which begins it)."""
        with self._breaker.guard() if self._breaker else nullcontext(), self._work() as work:
            yield work[0]

    @contextmanager
    def _work(self) -> Iterator[tuple[Connection, Cursor]]:
        conn = self._acquire()
        try:
            cur = conn.cursor()
            yield conn, cur
            cur.close()
            _commit(conn)
        except BaseException as exc:
            if is_connection_failure(exc):
                _close_quietly(conn)
                self.close()  # the others went with it
                raise DependencyUnavailable(f"postgres connection lost: {exc}") from exc
            try:
                conn.rollback()
            except BaseException:
                _close_quietly(conn)
                raise
            self._release(conn)
            raise
        self._release(conn)

    @contextmanager
    def session(self) -> Iterator[Cursor]:
        """A cursor on a connection of its own for the block, outside any transaction (for
        session-level locks); each statement commits at once."""
        with self._breaker.guard() if self._breaker else nullcontext():
            conn = self._acquire()
        try:
            cur = conn.cursor()
            yield _Autocommit(conn, cur)
            cur.close()
        except BaseException as exc:
            _close_quietly(conn)
            if is_connection_failure(exc):
                raise DependencyUnavailable(f"postgres connection lost: {exc}") from exc
            raise
        self._release(conn)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn, _ in idle:
            _close_quietly(conn)

    def _acquire(self) -> Connection:
        if self._pid != os.getpid():
            self._forget_parents()
        while True:
            with self._lock:
                conn, last_used = self._idle.pop() if self._idle else (None, 0.0)
            if conn is None:
                return self._connect()
            if _said_goodbye(conn):
                _close_quietly(conn)
            elif time.monotonic() - last_used < self._ping_after or _alive(conn):
                return conn
            else:
                _close_quietly(conn)

    def _forget_parents(self) -> None:
        """Drop, unclosed, the connections a fork inherited: closing one would end the
        parent's session (PostgreSQL's Terminate message), and a lock another thread held
        at the fork stays held in the child, so a new one replaces it."""
        self._lock = threading.Lock()
        self._idle, self._pid = [], os.getpid()

    def _release(self, conn: Connection) -> None:
        if self._pid != os.getpid():
            return  # a connection of the parent's: never reach it
        with self._lock:
            if len(self._idle) < self._max_idle:
                self._idle.append((conn, time.monotonic()))
                return
        _close_quietly(conn)


class _Autocommit:
    """A cursor whose every statement is committed at once."""

    def __init__(self, conn: Connection, cur: Cursor) -> None:
        self._conn, self._cur = conn, cur
        self.rowcount = 0

    def execute(self, operation: str, args: Any = ()) -> None:
        self._cur.execute(operation, args)
        self.rowcount = self._cur.rowcount
        _commit(self._conn)

    def fetchone(self) -> Any:
        return self._cur.fetchone()

    def fetchall(self) -> Any:
        return self._cur.fetchall()

    def close(self) -> None:
        self._cur.close()


def _commit(conn: Connection) -> None:
    if getattr(conn, "_in_transaction", True) is False:
        return  # the work committed itself (postgres_prepared)
    # pg8000's commit() goes through the extended protocol: three waits for the server
    # (parse, describe, execute). A simple-protocol COMMIT is one, on every transaction.
    simple = getattr(conn, "execute_simple", None)
    if simple is None:
        conn.commit()
    else:
        simple("commit")


def _said_goodbye(conn: Connection) -> bool:
    """Bytes waiting on an idle connection: the server closed it (a shutdown notice, or
    the end of the stream). A select with no wait; False when the socket is not visible."""
    sock = getattr(conn, "_usock", None)
    if not isinstance(sock, socket.socket) or sock.fileno() < 0:
        return False
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def _alive(conn: Connection) -> bool:
    try:
        cur = conn.cursor()
        cur.execute("SELECT 1")
        cur.fetchall()
        cur.close()
        conn.rollback()
    except (OSError, InterfaceError, DatabaseError):
        return False
    return True


def _close_quietly(conn: Connection) -> None:
    # It is being thrown away because it is already broken.
    with suppress(OSError, InterfaceError, DatabaseError):
        conn.close()


def run_outside_transaction(settings: Settings, sql: str) -> None:
    """One statement in autocommit mode: CREATE/DROP DATABASE refuse to run in a transaction."""
    conn: Any = connect(settings)
    try:
        conn.autocommit = True
        conn.cursor().execute(sql)
    finally:
        conn.close()
