"""``ExecutionMemory`` on PostgreSQL + pgvector (schema: ``0005_execution_memory.sql``).

The request, the plan and the failures are encrypted with the user's data key, each bound
to its column. ``record`` is one transaction: the erasure check under the user's lock (the
job may have been made before the user erased the account), the row keyed by (user, job)
(a redelivered job's second record writes nothing), one feedback row per refused step, and
a purge of expired rows (the user's, and a bounded batch of anyone's: PostgreSQL has no TTL,
the reads skip expired rows meanwhile).

``related`` computes exact cosine distances over the user's rows of the query's model and
dimension (a user holds tens to hundreds of runs, read through the (user, strategy) index):
the nearest runs name the strategies, and every live run of those comes back with its
similarity and its strategy's count of live feedback.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pgvector import Vector
from pydantic import TypeAdapter

from shared.adapters.postgres import Cursor, Database, constraints_as_rejected
from shared.adapters.postgres_erasure import erased_since
from shared.models.history import (
    Execution,
    ExecutionDraft,
    HistoryQuery,
    PlannedStep,
    StrategyFeedback,
    SubtaskFailure,
)
from shared.ports import KeyRing, UserCipher

REQUEST, PLAN, FAILURES = "executions.request", "executions.plan", "executions.failures"
PURGE_BATCH = 200  # expired rows of anyone, deleted with each record
_COLUMNS = (
    "e.id, e.user_id, e.job_id, e.strategy_id, e.request_enc, e.plan_enc, e.failures_enc,"
    " e.outcome, e.subtasks, e.retries, e.duration_ms, e.tokens, e.embedding_model,"
    " e.created_at, e.expires_at"
)
_PENALTIES = (
    "(SELECT count(*) FROM strategy_feedback f WHERE f.user_id = e.user_id"
    " AND f.strategy_id = e.strategy_id AND f.expires_at > %s)"
)
_INSERT = (
    "INSERT INTO executions (id, user_id, job_id, strategy_id, request_enc, plan_enc,"
    " failures_enc, outcome, subtasks, retries, duration_ms, tokens, embedding,"
    " embedding_model, embedding_dim, created_at, expires_at)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (user_id, job_id) DO NOTHING"
)
_INSERT_FEEDBACK = (
    "INSERT INTO strategy_feedback (user_id, key, strategy_id, kind, created_at, expires_at)"
    " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (user_id, key) DO NOTHING"
)
_STEPS = TypeAdapter(list[PlannedStep])
_FAILURES = TypeAdapter(list[SubtaskFailure])


class PostgresExecutionStore:
    def __init__(self, db: Database, keys: KeyRing) -> None:
        self._db = db
        self._keys = keys

    def record(self, draft: ExecutionDraft, issued_at: datetime) -> bool:
        user_id = draft.user_id
        if self._erased(user_id, issued_at):  # before the key: an erased user gets no new one
            return False
        args = _insert_args(self._keys.cipher_for(user_id), draft)
        with constraints_as_rejected(), self._db.transaction() as cur:
            if erased_since(cur, user_id, issued_at):
                return False
            cur.execute(_INSERT, args)
            if cur.rowcount == 0:
                return False  # recorded before: this transaction writes nothing
            times = (draft.created_at, draft.expires_at)
            for key in draft.rejected:
                cur.execute(
                    _INSERT_FEEDBACK, (user_id, key, draft.strategy_id, "rejected_step", *times)
                )
            _purge_expired(cur, draft.created_at)
        return True

    def related(self, user_id: str, query: HistoryQuery, now: datetime) -> list[Execution]:
        dim = len(query.embedding)
        vector = f"e.embedding::vector({dim}) <=> %s::vector({dim})"
        mine = "e.user_id = %s AND e.embedding_model = %s AND e.embedding_dim = %s"
        live = " AND e.expires_at > %s"
        sql = (
            f"WITH nearest AS (SELECT e.strategy_id FROM executions e WHERE {mine}{live}"
            f" ORDER BY {vector} LIMIT %s)"
            f" SELECT {_COLUMNS}, {_PENALTIES}, 1 - ({vector}) AS similarity"
            f" FROM executions e WHERE {mine}{live}"
            f" AND e.strategy_id IN (SELECT strategy_id FROM nearest)"
            f" ORDER BY similarity DESC, e.created_at DESC, e.id"
        )
        embedding, model = Vector(query.embedding), query.embedding_model
        args = [user_id, model, dim, now, embedding, query.limit]
        args += [now, embedding, user_id, model, dim, now]
        return self._select(user_id, sql, args)

    def add_feedback(self, feedback: StrategyFeedback) -> bool:
        base = (feedback.user_id, feedback.key)
        times = (feedback.created_at, feedback.expires_at)
        if feedback.strategy_id is not None:
            self._keys.cipher_for(feedback.user_id)  # the row needs the user's key to exist
            with constraints_as_rejected(), self._db.transaction() as cur:
                cur.execute(_INSERT_FEEDBACK, (*base, feedback.strategy_id, feedback.kind, *times))
                return cur.rowcount > 0
        with constraints_as_rejected(), self._db.transaction() as cur:
            cur.execute(
                "INSERT INTO strategy_feedback"
                " (user_id, key, strategy_id, kind, created_at, expires_at)"
                " SELECT %s, %s, strategy_id, %s, %s, %s FROM executions"
                " WHERE user_id = %s AND job_id = %s AND expires_at > %s"
                " ON CONFLICT (user_id, key) DO NOTHING",
                (*base, feedback.kind, *times, feedback.user_id, feedback.job_id, times[0]),
            )
            return cur.rowcount > 0

    def list_executions(self, user_id: str, now: datetime, limit: int) -> list[Execution]:
        if not 1 <= limit <= 1000:
            raise ValueError("limit must be 1..1000")
        sql = (
            f"SELECT {_COLUMNS}, {_PENALTIES}, NULL FROM executions e"
            " WHERE e.user_id = %s AND e.expires_at > %s"
            " ORDER BY e.created_at DESC, e.id LIMIT %s"
        )
        return self._select(user_id, sql, [now, user_id, now, limit])

    def forget_strategy(self, user_id: str, strategy_id: str) -> int:
        return self._delete(user_id, " AND strategy_id = %s", [strategy_id])

    def forget_all(self, user_id: str) -> int:
        return self._delete(user_id, "", [])

    def _delete(self, user_id: str, where: str, args: list[Any]) -> int:
        with self._db.transaction() as cur:
            cur.execute(
                f"DELETE FROM strategy_feedback WHERE user_id = %s{where}", [user_id, *args]
            )
            cur.execute(f"DELETE FROM executions WHERE user_id = %s{where}", [user_id, *args])
            return cur.rowcount

    def _erased(self, user_id: str, issued_at: datetime) -> bool:
        with self._db.transaction() as cur:
            return erased_since(cur, user_id, issued_at)

    def _select(self, user_id: str, sql: str, args: list[Any]) -> list[Execution]:
        with self._db.transaction() as cur:
            cur.execute(sql, args)
            rows = cur.fetchall()
        if not rows:
            return []  # no key is created for a user who has nothing
        cipher = self._keys.cipher_for(user_id)
        return [_execution(cipher, row) for row in rows]


def _insert_args(cipher: UserCipher, draft: ExecutionDraft) -> list[Any]:
    plan = json.dumps([step.model_dump() for step in draft.plan])
    failures = json.dumps([failure.model_dump() for failure in draft.failures])
    return [
        str(uuid.uuid4()),
        draft.user_id,
        draft.job_id,
        draft.strategy_id,
        cipher.encrypt(draft.request, REQUEST),
        cipher.encrypt(plan, PLAN),
        cipher.encrypt(failures, FAILURES),
        draft.outcome,
        draft.subtasks,
        draft.retries,
        draft.duration_ms,
        draft.tokens,
        Vector(draft.embedding),
        draft.embedding_model,
        len(draft.embedding),
        draft.created_at,
        draft.expires_at,
    ]


def _execution(cipher: UserCipher, row: Sequence[Any]) -> Execution:
    (execution_id, user_id, job_id, strategy_id, request_enc, plan_enc, failures_enc) = row[:7]
    (outcome, subtasks, retries, duration_ms, tokens, model, created, expires) = row[7:15]
    penalties, similarity = row[15:17]
    return Execution(
        id=str(execution_id),
        user_id=user_id,
        job_id=job_id,
        strategy_id=strategy_id,
        request=cipher.decrypt(request_enc, REQUEST),
        plan=_STEPS.validate_json(cipher.decrypt(plan_enc, PLAN)),
        failures=_FAILURES.validate_json(cipher.decrypt(failures_enc, FAILURES)),
        outcome=outcome,
        subtasks=int(subtasks),
        retries=int(retries),
        duration_ms=int(duration_ms),
        tokens=int(tokens),
        embedding_model=model,
        created_at=created,
        expires_at=expires,
        penalties=int(penalties),
        similarity=None if similarity is None else float(similarity),
    )


def _purge_expired(cur: Cursor, now: datetime) -> None:
    cur.execute(
        "DELETE FROM executions WHERE id IN"
        " (SELECT id FROM executions WHERE expires_at <= %s LIMIT %s)",
        (now, PURGE_BATCH),
    )
    cur.execute(
        "DELETE FROM strategy_feedback WHERE (user_id, key) IN"
        " (SELECT user_id, key FROM strategy_feedback WHERE expires_at <= %s LIMIT %s)",
        (now, PURGE_BATCH),
    )
