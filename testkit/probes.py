"""Round trips and time per store, counted at the client libraries (for ``bench.turn``).

Nothing of the project is patched: the probes wrap the bench's own client instances.

- **Firestore**: the GAPIC client under ``firestore.Client`` (``client._firestore_api``), one
  count per RPC: reads (BatchGetDocuments, RunQuery, ...), commits (Commit, BatchWrite, ...;
  plus the documents each one writes) and transaction control (BeginTransaction, Rollback).
  A streamed answer's time includes reading the stream.
- **Redis**: the ``redis.Redis`` instance: one command is one round trip; a pipeline is one
  round trip carrying its commands.
- **PostgreSQL**: each pg8000 connection the bench's ``Database`` opens: statements (the
  application's queries, and the BEGIN/COMMIT/ROLLBACK pg8000 sends for them) and wire
  round trips (flushes of its socket: pg8000 sends a parameterised statement in three
  flights, Parse, Describe, then Bind/Execute, each waiting for the server).
- **Cloud Tasks**: ``create_task`` calls of the task queue's client.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from shared.adapters.postgres import Connection, connect
from shared.config import Settings

FIRESTORE_RPCS = {
    "batch_get_documents": "fs.reads", "get_document": "fs.reads", "run_query": "fs.reads",
    "run_aggregation_query": "fs.reads", "list_documents": "fs.reads",
    "list_collection_ids": "fs.reads", "partition_query": "fs.reads",
    "commit": "fs.commits", "batch_write": "fs.commits", "create_document": "fs.commits",
    "update_document": "fs.commits", "delete_document": "fs.commits",
    "begin_transaction": "fs.tx", "rollback": "fs.tx",
}  # fmt: skip
_STREAMED = {"batch_get_documents", "run_query", "run_aggregation_query", "partition_query"}


class Probe:
    """Thread-safe tallies: ``counts`` of round trips and statements, ``ms`` per store."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._ms: defaultdict[str, float] = defaultdict(float)

    def add(self, key: str, n: int = 1) -> None:
        with self._lock:
            self._counts[key] += n

    def add_ms(self, store: str, started: float) -> None:
        elapsed = (time.perf_counter() - started) * 1000
        with self._lock:
            self._ms[store] += elapsed

    @contextmanager
    def timed(self, store: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.add_ms(store, started)

    def snapshot(self) -> tuple[Counter[str], dict[str, float]]:
        with self._lock:
            return Counter(self._counts), dict(self._ms)

    def since(
        self, mark: tuple[Counter[str], dict[str, float]]
    ) -> tuple[Counter[str], dict[str, float]]:
        """Counts and milliseconds added after ``mark`` (a ``snapshot()``)."""
        counts, ms = self.snapshot()
        return counts - mark[0], {k: v - mark[1].get(k, 0.0) for k, v in ms.items()}


# -- Firestore --------------------------------------------------------------------------------
class _TimedStream:
    """A streamed RPC's answer; the time spent waiting for each message goes to the probe."""

    def __init__(self, inner: Any, probe: Probe) -> None:
        self._inner, self._probe = inner, probe

    def __iter__(self) -> _TimedStream:
        return self

    def __next__(self) -> Any:
        started = time.perf_counter()
        try:
            return next(self._inner)
        finally:
            self._probe.add_ms("fs", started)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def count_firestore(client: Any, probe: Probe) -> None:
    api = client._firestore_api  # the GAPIC client, built once and cached by firestore.Client
    for name, key in FIRESTORE_RPCS.items():
        setattr(api, name, _firestore_rpc(getattr(api, name), name, key, probe))


def _firestore_rpc(rpc: Callable[..., Any], name: str, key: str, probe: Probe) -> Any:
    @functools.wraps(rpc)
    def call(*args: Any, **kwargs: Any) -> Any:
        probe.add(key)
        if name == "commit":
            request = kwargs.get("request") or (args[0] if args else {})
            writes = request.get("writes") if isinstance(request, dict) else request.writes
            probe.add("fs.docs", len(writes or ()))
        with probe.timed("fs"):
            result = rpc(*args, **kwargs)
        return _TimedStream(iter(result), probe) if name in _STREAMED else result

    return call


# -- Redis ------------------------------------------------------------------------------------
def count_redis(client: Any, probe: Probe) -> None:
    execute_command, pipeline = client.execute_command, client.pipeline

    def command(*args: Any, **kwargs: Any) -> Any:
        probe.add("redis.cmds")
        probe.add("redis.rtt")
        with probe.timed("redis"):
            return execute_command(*args, **kwargs)

    def counted_pipeline(*args: Any, **kwargs: Any) -> Any:
        pipe = pipeline(*args, **kwargs)
        execute = pipe.execute

        def run(*a: Any, **k: Any) -> Any:
            probe.add("redis.cmds", len(pipe.command_stack))
            probe.add("redis.rtt")
            with probe.timed("redis"):
                return execute(*a, **k)

        pipe.execute = run
        return pipe

    client.execute_command, client.pipeline = command, counted_pipeline


# -- PostgreSQL -------------------------------------------------------------------------------
class _CountingSocket:
    """pg8000's buffered socket file: every flush sends a flight and waits for the answer."""

    def __init__(self, sock: Any, probe: Probe) -> None:
        self._sock, self._probe = sock, probe

    def flush(self) -> None:
        self._probe.add("pg.rtt")
        self._sock.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


def _statement_kind(statement: str) -> str:
    word = statement.split(None, 1)[0].lower() if statement.strip() else ""
    return {"begin": "pg.begin", "commit": "pg.commit", "rollback": "pg.rollback"}.get(
        word, "pg.queries"
    )


def counting_connect(settings: Settings, probe: Probe) -> Callable[[], Connection]:
    """A ``Database`` factory: ``connect(settings)``, then counted from its first statement."""

    def factory() -> Connection:
        probe.add("pg.connects")
        with probe.timed("pg"):
            conn: Any = connect(settings)
        for method in ("execute_simple", "execute_unnamed", "execute_named"):
            setattr(conn, method, _pg_statement(getattr(conn, method), probe))
        conn._sock = _CountingSocket(conn._sock, probe)
        return conn  # type: ignore[no-any-return]

    return factory


def _pg_statement(execute: Callable[..., Any], probe: Probe) -> Callable[..., Any]:
    @functools.wraps(execute)
    def run(statement: Any, *args: Any, **kwargs: Any) -> Any:
        probe.add(_statement_kind(statement if isinstance(statement, str) else ""))
        with probe.timed("pg"):
            return execute(statement, *args, **kwargs)

    return run


# -- Cloud Tasks ------------------------------------------------------------------------------
def count_tasks(client: Any, probe: Probe) -> None:
    create_task = client.create_task

    def create(*args: Any, **kwargs: Any) -> Any:
        probe.add("tasks.create")
        with probe.timed("tasks"):
            return create_task(*args, **kwargs)

    client.create_task = create
