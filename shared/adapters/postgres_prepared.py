"""Hot read paths in fewer round trips: a statement prepared once per pooled connection.

pg8000 runs a statement with parameters as three waits for the server (parse, describe,
then bind and execute), between a wait for ``BEGIN`` and one for ``COMMIT``, and rewrites
the ``%s`` placeholders in Python each time (a character-by-character scan of the SQL).
``Prepared.rows`` parses and describes a statement once per connection; after that, the
whole transaction is one wait: ``BEGIN`` with its ``SET LOCAL`` settings, bind and
execute, ``COMMIT``, written at once (the protocol lets a client send messages before the
replies to earlier ones; pg8000's own message writers are used, and its reader reads the
three replies in turn). With ``plan_cache_mode = force_custom_plan`` the server still
plans each execution with its parameters' values, as for an unnamed statement: the plans
do not change.

``vector_text``: a query vector in pgvector's text form, rendered once for the channels
that send it; ``%.9g`` of each float32 reads back as the same float32, so the server
compares exactly the vector ``Vector.to_text`` would have sent (three times faster).
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np
from pg8000 import core
from pg8000.converters import make_params
from pg8000.dbapi import convert_paramstyle
from pg8000.exceptions import DatabaseError, InterfaceError

from shared.adapters.postgres import Connection, sqlstate

# A handful of statement shapes exist (channels x boost, window, privacy, as-of); past
# this many on one connection, further shapes run unprepared rather than pile up.
MAX_PREPARED = 32
CUSTOM_PLANS = "SET LOCAL plan_cache_mode = force_custom_plan"
# The statement no longer fits its table ("cached plan must not change result type"), or
# the server no longer has it: prepare it again. Other refusals keep it.
_STALE = {"0A000", "26000"}

_prepared: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


@functools.lru_cache(maxsize=8)
def _vector_text(values: tuple[float, ...]) -> str:
    floats = np.asarray(values, dtype=np.float32).tolist()
    return "[" + ",".join(["%.9g"] * len(floats)) % tuple(floats) + "]"


def vector_text(values: Sequence[float]) -> str:
    """``[x1,...,xn]``: the last few are cached (the recall's channels share one)."""
    return _vector_text(tuple(values))


class Prepared:
    """A transaction of one statement on one connection; see the module's docstring."""

    def __init__(self, conn: Connection, settings: Sequence[str] = ()) -> None:
        self._conn: Any = conn
        self._begin = "BEGIN; " + "; ".join([CUSTOM_PLANS, *settings])

    def rows(self, sql: str, args: Sequence[Any]) -> list[Any]:
        """The transaction's rows: begun, run and committed in one round trip once the
        statement is prepared on this connection (the first time costs one more)."""
        conn, statement = self._conn, self._statement(sql, args)
        if statement is None:  # unprepared: the caller's ``Database`` commits
            conn.execute_simple(self._begin)
            cur = conn.cursor()
            cur.execute(sql, args)
            return list(cur.fetchall())
        name, columns, funcs, text = statement
        conn.send_QUERY(self._begin)
        conn.send_BIND(name, make_params(conn.py_types, args))
        conn.send_EXECUTE()
        core._write(conn._sock, core.SYNC_MSG)
        conn.send_QUERY("COMMIT")  # after an error, the server rolls back instead
        core._flush(conn._sock)
        replies = [core.Context(self._begin), core.Context(text, columns=columns,
                   input_funcs=funcs), core.Context("COMMIT")]  # fmt: skip
        refused = [error for reply in replies if (error := _read(conn, reply)) is not None]
        if refused:
            if sqlstate(refused[0]) in _STALE:
                self._forget(sql)  # prepared afresh next time
            raise refused[0]
        return list(replies[1].rows or [])

    def _statement(self, sql: str, args: Sequence[Any]) -> tuple[Any, ...] | None:
        with _lock:
            known = _prepared.setdefault(self._conn, {})
            found: tuple[Any, ...] | None = known.get(sql)
        if found is not None or len(known) >= MAX_PREPARED:
            return found
        text, _ = convert_paramstyle("format", sql, args)
        name, columns, funcs = self._conn.prepare_statement(text, ())
        found = (name, columns, funcs, text)
        with _lock:
            known[sql] = found
        return found

    def _forget(self, sql: str) -> None:
        with _lock:
            _prepared.get(self._conn, {}).pop(sql, None)


def _read(conn: Any, reply: Any) -> Exception | None:
    """One reply, up to its ready-for-query: what the server refused is returned, so that
    the replies after it are still read and the connection stays in step."""
    refused: Exception | None = None
    try:
        conn.handle_messages(reply)
    except DatabaseError as exc:
        refused = exc
    except InterfaceError as exc:  # the COMMIT of a refused transaction (it rolled back)
        if str(exc) != "in failed transaction block":
            raise
        refused = exc
    return refused
