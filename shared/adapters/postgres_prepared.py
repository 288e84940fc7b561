"""Hot read paths in fewer round trips: a statement prepared once per pooled connection.

pg8000 runs a statement with parameters as three waits for the server (parse, describe,
then bind and execute), after a fourth for ``BEGIN``, and rewrites the ``%s`` placeholders
in Python each time (a character-by-character scan of the SQL). ``Prepared.rows`` parses
and describes a statement once per connection and, after that, costs one wait (bind and
execute); the transaction's ``BEGIN`` travels with its ``SET LOCAL`` settings as one simple
query. With ``plan_cache_mode = force_custom_plan`` the server still plans each execution
with its parameters' values, as for an unnamed statement: the plans do not change.

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
from pg8000.converters import make_params
from pg8000.dbapi import convert_paramstyle
from pg8000.exceptions import DatabaseError

from shared.adapters.postgres import Connection

# A handful of statement shapes exist (channels x boost, window, privacy, as-of); past
# this many on one connection, further shapes run unprepared rather than pile up.
MAX_PREPARED = 32
CUSTOM_PLANS = "SET LOCAL plan_cache_mode = force_custom_plan"

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
    """Statements of one transaction on one connection; see the module's docstring."""

    def __init__(self, conn: Connection, settings: Sequence[str] = ()) -> None:
        self._conn: Any = conn
        self._pending = [CUSTOM_PLANS, *settings]

    def rows(self, sql: str, args: Sequence[Any]) -> list[Any]:
        conn, begin = self._conn, self._pending
        if begin:  # the transaction starts with the first statement, as a cursor's would
            self._pending = []
            conn.execute_simple("BEGIN; " + "; ".join(begin))
        statement = self._statement(sql, args)
        if statement is None:
            cur = conn.cursor()
            cur.execute(sql, args)
            return list(cur.fetchall())
        name, columns, funcs, text = statement
        try:
            done = conn.execute_named(name, make_params(conn.py_types, args), columns, funcs,
                                      text)  # fmt: skip
        except DatabaseError:
            self._forget(sql)  # e.g. the table changed under it: prepared afresh next time
            raise
        return list(done.rows or [])

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
