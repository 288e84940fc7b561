"""The execution memory's backends for the contract tests (the in-memory fake and
PostgreSQL, each with its account erasure), and builders of executions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared.adapters.postgres import Database
from shared.adapters.postgres_executions import PostgresExecutionStore
from shared.adapters.postgres_facts import PostgresFactStore
from shared.adapters.postgres_keyring import PostgresKeyRing
from shared.fakes.executions import FakeExecutionStore
from shared.fakes.facts import FakeContactStore, FakeFactStore
from shared.fakes.scripted_llm import HashEmbedder
from shared.models.history import ExecutionDraft, PlannedStep
from shared.ports import ExecutionMemory
from shared.services.history.shape import shape
from tests.contract.conftest import BACKENDS

NOW = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)
TTL = timedelta(days=180)
EMBEDDER = HashEmbedder(dimension=384)


@dataclass
class ExecutionBackend:
    store: ExecutionMemory
    erase: Callable[[str, datetime], None]  # the account's erasure, as the memory function
    database: Database | None = None


@pytest.fixture(params=BACKENDS)
def execution_backend(request: pytest.FixtureRequest) -> ExecutionBackend:
    if request.param == "fake":
        facts = FakeFactStore(FakeContactStore())
        fake = FakeExecutionStore(erased_at=facts.data.erased.get)

        def erase_fake(user: str, now: datetime) -> None:
            fake.forget_all(user)
            facts.delete_user(user, now)

        return ExecutionBackend(fake, erase_fake)
    request.getfixturevalue("stack_env")
    db: Database = request.getfixturevalue("database")
    keys = PostgresKeyRing(db, request.getfixturevalue("local_kek"))
    real = PostgresExecutionStore(db, keys)
    fact_store = PostgresFactStore(db, keys)

    def erase_real(user: str, now: datetime) -> None:
        real.forget_all(user)
        fact_store.delete_user(user, now)

    return ExecutionBackend(real, erase_real, db)


def plan(*goals: str, agent: str = "research") -> list[PlannedStep]:
    return [
        PlannedStep(id=f"s{i}", agent=agent, goal=goal, depends_on=[f"s{i - 1}"] if i > 1 else [])
        for i, goal in enumerate(goals, start=1)
    ]


def execution(
    user: str,
    job: str,
    request: str,
    *,
    strategy: str | None = None,
    outcome: str = "done",
    at: datetime = NOW,
    **extra: Any,
) -> ExecutionDraft:
    return ExecutionDraft.model_validate(
        {
            "user_id": user,
            "job_id": job,
            "strategy_id": strategy or f"st-{job}",
            "request": request,
            "plan": plan(f"Research {request}"),
            "outcome": outcome,
            "subtasks": 1,
            "embedding": EMBEDDER.embed([shape(request)])[0],
            "embedding_model": EMBEDDER.model_name,
            "created_at": at,
            "expires_at": at + TTL,
            **extra,
        }
    )
