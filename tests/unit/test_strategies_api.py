"""``/settings/strategies/*``, the export and the erasure on the fakes: what the assistant
learned about how to do things for the user, listed per strategy, forgotten one by one or
all at once; exported with the account and erased with it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from shared.deps import Deps
from shared.fakes.clock import FixedClock
from shared.models.history import ExecutionDraft, PlannedStep, SubtaskFailure
from tests.unit.memory_calls import ok, refused


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


def strategies(deps: Deps, user: str = "alice", **page: object) -> dict[str, Any]:
    listed: dict[str, Any] = ok(deps, user, "GET", "/v1/strategies", **page)
    return listed


def test_strategies_are_listed_with_their_runs_feedback_and_lessons(
    deps: Deps, clock: FixedClock
) -> None:
    record(deps, "j1", "A", "the AI agent market")
    clock.advance(60)
    record(deps, "j2", "A", "the RPA market", outcome="aborted")
    clock.advance(60)
    record(deps, "j3", "B", "my spending")
    deps.advisor.feedback("alice", "turn-1", "wrong", job_id="j1")
    listed = strategies(deps)["strategies"]
    assert [s["strategy_id"] for s in listed] == ["B", "A"]  # most recently run first
    a = listed[1]
    assert a["requests"] == ["the RPA market", "the AI agent market"]
    counts = [a[name] for name in ("runs", "done", "failed", "feedback", "last_outcome")]
    assert counts == [2, 1, 1, 1, "aborted"]
    assert a["plan"][0]["goal"] == "Research the AI agent market"  # the run that worked
    assert a["failures"][0]["error"] == "step_limit: x"  # what the planner is warned of
    assert a["success_rate"] == pytest.approx(2 / 4)
    assert strategies(deps, "bob")["strategies"] == []
    first = strategies(deps, page_size=1)
    assert [s["strategy_id"] for s in first["strategies"]] == ["B"]
    second = strategies(deps, page_size=1, page_token=first["next_page_token"])
    assert ([s["strategy_id"] for s in second["strategies"]], second["next_page_token"]) == (
        ["A"],
        "",
    )


def test_one_strategy_or_all_can_be_forgotten(deps: Deps) -> None:
    record(deps, "j1", "A", "the AI agent market")
    record(deps, "j2", "A", "the RPA market")
    record(deps, "j3", "B", "my spending")
    assert ok(deps, "alice", "DELETE", "/v1/strategies/A")["forgotten"] == 2
    assert refused(deps, "alice", "DELETE", "/v1/strategies/A") == (404, "not_found")
    # another user's strategy looks like none
    assert refused(deps, "bob", "DELETE", "/v1/strategies/B") == (404, "not_found")
    assert [s["strategy_id"] for s in strategies(deps)["strategies"]] == ["B"]
    assert refused(deps, "alice", "POST", "/v1/strategies:forgetAll", {"confirm": False})[0] == 400
    assert ok(deps, "alice", "POST", "/v1/strategies:forgetAll", {"confirm": True}) == {
        "forgotten": 1
    }
    assert strategies(deps)["strategies"] == []


def test_a_strategy_id_outside_its_pattern_is_refused(deps: Deps) -> None:
    path = "/v1/strategies/x'%20OR%201=1%20--"
    assert refused(deps, "alice", "DELETE", path) == (400, "invalid_request")


def test_the_execution_memory_is_exported_and_erased_with_the_account(deps: Deps) -> None:
    record(deps, "j1", "A", "the AI agent market")
    [run] = ok(deps, "alice", "GET", "/v1/account:export")["executions"]
    assert (run["job_id"], run["request"], run["outcome"]) == ("j1", "the AI agent market", "done")
    ok(deps, "alice", "DELETE", "/v1/account", confirm="true")
    assert ok(deps, "alice", "GET", "/v1/account:export")["executions"] == []
    assert strategies(deps)["strategies"] == []
