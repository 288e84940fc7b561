"""``/settings/strategies/*``, the export and the erasure on the fakes: what the assistant
learned about how to do things for the user, listed per strategy, forgotten one by one or
all at once; exported with the account and erased with it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from shared.adapters.clock import FixedClock
from shared.app.settings.api import SettingsApi, operation_for
from shared.deps import Deps
from shared.errors import NotFound
from shared.models.history import ExecutionDraft, PlannedStep, SubtaskFailure
from shared.models.history_api import ForgetAllRequest, StrategyRef


def record(deps: Deps, job: str, strategy: str, request: str, outcome: str = "done") -> None:
    now = deps.clock.now()
    failures = (
        [SubtaskFailure(subtask_id="s1", agent="research", goal="g", error="step_limit: x")]
        if outcome == "aborted"
        else []
    )
    draft = ExecutionDraft(
        user_id="alice",
        job_id=job,
        strategy_id=strategy,
        request=request,
        plan=[PlannedStep(id="s1", agent="research", goal=f"Research {request}")],
        outcome=outcome,  # type: ignore[arg-type]
        failures=failures,
        subtasks=1,
        embedding=deps.embedder.embed([request])[0],
        embedding_model=deps.embedder.model_name,
        created_at=now,
        expires_at=now + timedelta(days=180),
    )
    assert deps.executions.record(draft, issued_at=now)


@pytest.fixture
def api(deps: Deps) -> SettingsApi:
    return SettingsApi(deps)


def test_strategies_are_listed_with_their_runs_feedback_and_lessons(
    api: SettingsApi, deps: Deps, clock: FixedClock
) -> None:
    record(deps, "j1", "A", "the AI agent market")
    clock.advance(60)
    record(deps, "j2", "A", "the RPA market", outcome="aborted")
    clock.advance(60)
    record(deps, "j3", "B", "my spending")
    deps.advisor.feedback("alice", "turn-1", "wrong", job_id="j1")
    listed = api.strategies.list("alice").strategies
    assert [s.strategy_id for s in listed] == ["B", "A"]  # most recently run first
    a = listed[1]
    assert a.requests == ["the RPA market", "the AI agent market"]
    assert (a.runs, a.done, a.failed, a.feedback, a.last_outcome) == (2, 1, 1, 1, "aborted")
    assert a.plan[0].goal == "Research the AI agent market"  # the run that worked
    assert a.failures[0].error == "step_limit: x"  # what the planner is warned of
    assert a.success_rate == pytest.approx(2 / 4)
    assert api.strategies.list("bob").strategies == []


def test_one_strategy_or_all_can_be_forgotten(api: SettingsApi, deps: Deps) -> None:
    record(deps, "j1", "A", "the AI agent market")
    record(deps, "j2", "A", "the RPA market")
    record(deps, "j3", "B", "my spending")
    assert api.strategies.forget("alice", StrategyRef(strategy_id="A")).forgotten == 2
    with pytest.raises(NotFound):
        api.strategies.forget("alice", StrategyRef(strategy_id="A"))
    with pytest.raises(NotFound):  # another user's strategy looks like none
        api.strategies.forget("bob", StrategyRef(strategy_id="B"))
    assert [s.strategy_id for s in api.strategies.list("alice").strategies] == ["B"]
    assert api.strategies.forget_all("alice", ForgetAllRequest(confirm=True)).forgotten == 1
    assert api.strategies.list("alice").strategies == []


def test_the_requests_are_checked() -> None:
    assert operation_for("/settings/strategies/forget").request is StrategyRef
    with pytest.raises(ValidationError):
        ForgetAllRequest.model_validate({"confirm": False})
    with pytest.raises(ValidationError):
        StrategyRef.model_validate({"strategy_id": "x' OR 1=1 --"})


def test_the_execution_memory_is_exported_and_erased_with_the_account(
    api: SettingsApi, deps: Deps
) -> None:
    record(deps, "j1", "A", "the AI agent market")
    [run] = api.account.export("alice").executions
    assert (run.job_id, run.request, run.outcome) == ("j1", "the AI agent market", "done")
    api.account.delete("alice")
    assert api.account.export("alice").executions == []
    assert api.strategies.list("alice").strategies == []
