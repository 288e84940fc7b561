"""ExecutionMemory contract: the fake and PostgreSQL keep one execution per job however
often it is recorded, find the runs of the strategies nearest a request, count feedback
once per key, hide and purge what expired, forget a strategy or all, refuse a job made
before the account's erasure, and keep each user's runs to that user."""

from __future__ import annotations

from datetime import timedelta

import pytest

from shared.adapters.keyring_local import LocalKek
from shared.adapters.postgres import Database
from shared.adapters.postgres_executions import PostgresExecutionStore
from shared.adapters.postgres_keyring import PostgresKeyRing
from shared.models.history import HistoryQuery, StrategyFeedback, SubtaskFailure
from shared.services.history.shape import shape
from tests.contract.conftest import unique
from tests.contract.history_kit import (
    EMBEDDER,
    NOW,
    TTL,
    ExecutionBackend,
    execution,
    execution_backend,
    plan,
)

__all__ = ["execution_backend"]  # the fixture, parametrised over fake and real


def query(text: str, limit: int = 8) -> HistoryQuery:
    return HistoryQuery(
        embedding=EMBEDDER.embed([shape(text)])[0],
        embedding_model=EMBEDDER.model_name,
        limit=limit,
    )


def feedback(user: str, key: str, **target: str) -> StrategyFeedback:
    return StrategyFeedback(
        user_id=user, key=key, kind="wrong", created_at=NOW, expires_at=NOW + TTL, **target
    )


def test_a_job_is_recorded_once_however_often_it_is_delivered(
    execution_backend: ExecutionBackend,
) -> None:
    store, user = execution_backend.store, unique("user")
    first = execution(
        user,
        "j1",
        "Research the AI agent market",
        plan=plan("Collect the players", "Compare them"),
        failures=[SubtaskFailure(subtask_id="s2", agent="research", goal="g", error="x: y")],
        outcome="partial",
        retries=2,
        duration_ms=1234,
        tokens=900,
    )
    assert store.record(first, issued_at=NOW - timedelta(minutes=5)) is True
    again = first.model_copy(update={"outcome": "done", "request": "something else"})
    assert store.record(again, issued_at=NOW - timedelta(minutes=5)) is False
    [stored] = store.list_executions(user, NOW, 10)
    assert (stored.job_id, stored.request, stored.outcome) == (
        "j1", "Research the AI agent market", "partial",
    )  # fmt: skip
    assert [s.goal for s in stored.plan] == ["Collect the players", "Compare them"]
    assert stored.plan[1].depends_on == ["s1"]
    assert stored.failures[0].error == "x: y"
    assert (stored.retries, stored.duration_ms, stored.tokens) == (2, 1234, 900)


def test_related_returns_every_run_of_the_nearest_strategies_with_similarity(
    execution_backend: ExecutionBackend,
) -> None:
    store, user = execution_backend.store, unique("user")
    store.record(execution(user, "j1", "Research the AI agent market", strategy="A"), NOW)
    later = NOW + timedelta(hours=1)
    store.record(
        execution(user, "j2", "Plan my week with reminders", strategy="A", at=later), NOW
    )  # a run of A for another request: it comes with A
    store.record(execution(user, "j3", "Summarize my spending this month", strategy="B"), NOW)
    found = store.related(user, query("Research the RPA market", limit=1), later)
    assert [r.job_id for r in found] == ["j1", "j2"]  # A's runs, nearest first
    assert found[0].similarity is not None and found[1].similarity is not None
    assert found[0].similarity > 0.8 > found[1].similarity
    everything = store.related(user, query("Research the RPA market", limit=5), later)
    assert {r.strategy_id for r in everything} == {"A", "B"}


def test_related_compares_only_vectors_of_the_query_model(
    execution_backend: ExecutionBackend,
) -> None:
    store, user = execution_backend.store, unique("user")
    other = execution(user, "j1", "Research the AI agent market").model_copy(
        update={"embedding_model": "another-model"}
    )
    store.record(other, NOW)
    assert store.related(user, query("Research the AI agent market"), NOW) == []


def test_feedback_counts_once_per_key_against_the_strategy(
    execution_backend: ExecutionBackend,
) -> None:
    store, user = execution_backend.store, unique("user")
    rejected = execution(user, "j1", "Book the gym", strategy="A", rejected=["j1-s1-q1"])
    store.record(rejected, NOW)
    store.record(execution(user, "j2", "Book the pool", strategy="A"), NOW)
    assert store.add_feedback(feedback(user, "turn-9", job_id="j2")) is True
    assert store.add_feedback(feedback(user, "turn-9", job_id="j2")) is False  # a retry
    assert store.add_feedback(feedback(user, "turn-10", strategy_id="A")) is True
    assert store.add_feedback(feedback(user, "turn-11", job_id="no-such-job")) is False
    runs = store.list_executions(user, NOW, 10)
    assert [r.penalties for r in runs] == [3, 3]  # the rejection, "wrong" twice: all of A's


def test_expired_runs_are_invisible_and_purged_by_later_writes(
    execution_backend: ExecutionBackend,
) -> None:
    store, user = execution_backend.store, unique("user")
    store.record(execution(user, "old", "Research the AI agent market"), NOW)
    after = NOW + TTL + timedelta(seconds=1)
    assert store.list_executions(user, after, 10) == []
    assert store.related(user, query("Research the AI agent market"), after) == []
    store.record(execution(user, "new", "Plan my week", at=after), after)
    # read as of before the expiry, "old" would show, had the write not purged it
    assert [r.job_id for r in store.list_executions(user, NOW, 10)] == ["new"]


def test_forgetting_one_strategy_or_all(execution_backend: ExecutionBackend) -> None:
    store, user = execution_backend.store, unique("user")
    for job, strategy in (("j1", "A"), ("j2", "A"), ("j3", "B")):
        store.record(execution(user, job, f"Research {job}", strategy=strategy), NOW)
    store.add_feedback(feedback(user, "k", strategy_id="A"))
    assert store.forget_strategy(user, "A") == 2
    assert store.forget_strategy(user, "A") == 0
    assert [r.job_id for r in store.list_executions(user, NOW, 10)] == ["j3"]
    store.record(execution(user, "j4", "Research again", strategy="A"), NOW)
    assert store.list_executions(user, NOW, 10)[0].penalties == 0  # its feedback went too
    assert store.forget_all(user) == 2
    assert store.list_executions(user, NOW, 10) == []


def test_a_job_made_before_the_account_was_erased_is_not_recorded(
    execution_backend: ExecutionBackend,
) -> None:
    store, user = execution_backend.store, unique("user")
    store.record(execution(user, "j1", "Research the AI agent market"), NOW)
    execution_backend.erase(user, NOW)
    assert store.list_executions(user, NOW, 10) == []
    late = execution(user, "j2", "Research the RPA market")
    assert store.record(late, issued_at=NOW - timedelta(seconds=1)) is False
    assert store.list_executions(user, NOW, 10) == []
    assert store.record(late, issued_at=NOW + timedelta(seconds=1)) is True  # a new job


def test_users_never_see_each_other(execution_backend: ExecutionBackend) -> None:
    store, alice, bob = execution_backend.store, unique("alice"), unique("bob")
    store.record(execution(alice, "j1", "Research the AI agent market", strategy="A"), NOW)
    assert store.list_executions(bob, NOW, 10) == []
    assert store.related(bob, query("Research the AI agent market"), NOW) == []
    assert store.add_feedback(feedback(bob, "k", job_id="j1")) is False
    assert store.forget_strategy(bob, "A") == 0
    assert store.forget_all(bob) == 0
    assert len(store.list_executions(alice, NOW, 10)) == 1


def test_the_list_is_bounded(execution_backend: ExecutionBackend) -> None:
    with pytest.raises(ValueError):
        execution_backend.store.list_executions(unique("user"), NOW, 0)


@pytest.mark.stack
@pytest.mark.usefixtures("stack_env")
def test_postgres_holds_no_plaintext_of_a_run(database: Database, local_kek: LocalKek) -> None:
    store = PostgresExecutionStore(database, PostgresKeyRing(database, local_kek))
    user, secret = unique("user"), "Quokka-Zanzibar-7731"
    failure = SubtaskFailure(subtask_id="s1", agent="research", goal=secret, error=secret)
    store.record(execution(user, "j1", f"Research {secret}", failures=[failure]), NOW)
    with database.transaction() as cur:
        cur.execute("SELECT row_to_json(e)::text FROM executions e WHERE user_id = %s", (user,))
        [[row]] = cur.fetchall()
    assert user in row and secret not in row
    assert secret in store.list_executions(user, NOW, 1)[0].request  # the user reads it back
