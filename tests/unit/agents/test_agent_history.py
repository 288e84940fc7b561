"""Every finished job leaves one execution in the execution memory: its request and plan,
its outcome (done, partial, aborted, escalated, cancelled), failures, retries, duration and
tokens, and the steps the user refused. A redelivered job records nothing more; a job of an
erased account records nothing."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from shared.app.agent_continuation import continue_job
from shared.deps import Deps
from shared.errors import DependencyUnavailable
from shared.fakes.clock import FixedClock
from shared.models.history import Execution, JobOrigin, PlannedStep
from shared.models.jobs import JobState
from shared.ports import JobStore, LLMRequest
from shared.services.history.recorder import strategy_for_job
from tests.unit.agents.agent_kit import (
    EchoTool,
    Runner,
    ScriptedCatalog,
    TeamModel,
    agent,
    call,
    finish,
    make_job,
    recruit,
    sub,
)


@pytest.fixture
def runner(deps: Deps, send: EchoTool) -> Runner:
    agents = [agent("worker", ["send", "lookup"]), agent("brief", max_steps=2)]
    return Runner(deps, ScriptedCatalog(agents, [send, EchoTool()]))


def runs(deps: Deps, now: object) -> list[Execution]:
    return deps.executions.list_executions("alice", now, 10)  # type: ignore[arg-type]


def test_a_done_job_is_recorded_once_with_its_plan_and_figures(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    origin = JobOrigin(
        request="Compare hotels and flights for Rome in May",
        strategy_id="strategy-1",
        plan=[
            PlannedStep(id="s1", agent="drafting", goal="note for Bea"),
            PlannedStep(id="s2", agent="research", goal="hotels", depends_on=["s1"]),
        ],
    )
    team.on("goal a", recruit("helper", "prices"), finish("A done"))
    job = make_job(clock.now(), sub("a"), sub("b", after=["a"]), origin=origin)
    clock.advance(2)
    assert runner.run(job).status == "done"
    assert runner.run(job, "m-again").status == "duplicate"  # a redelivery
    [run] = runs(deps, clock.now())
    assert (run.job_id, run.strategy_id, run.request) == ("t1-job0", "strategy-1", origin.request)
    assert run.plan == origin.plan  # the turn's whole plan, inline steps included
    assert (run.outcome, run.subtasks, run.failures) == ("done", 3, [])  # the helper counts
    assert run.duration_ms >= 0 and run.tokens > 0


class CrashOnFinalSave:
    """The job store, failing the write that would finish the job, once."""

    def __init__(self, inner: JobStore) -> None:
        self.inner, self.crashed = inner, False

    def get(self, user_id: str, job_id: str) -> JobState | None:
        return self.inner.get(user_id, job_id)

    def update(self, user_id: str, job_id: str, change: Callable[[JobState | None], Any]) -> Any:
        def crash_once(current: JobState | None) -> Any:
            result, new = change(current)
            if new is not None and new.status == "done" and not self.crashed:
                self.crashed = True
                raise DependencyUnavailable("firestore unavailable")
            return result, new

        return self.inner.update(user_id, job_id, crash_once)


def test_a_crash_after_recording_records_nothing_more_on_the_redelivery(
    runner: Runner, clock: FixedClock, deps: Deps
) -> None:
    deps.__dict__["jobs"] = CrashOnFinalSave(deps.jobs)
    job = make_job(clock.now(), sub("a"))
    with pytest.raises(DependencyUnavailable):  # Pub/Sub redelivers
        runner.run(job)
    assert len(runs(deps, clock.now())) == 1  # recorded before the final save
    assert runner.run(job, "m-2").status == "done"
    assert len(runs(deps, clock.now())) == 1


def test_a_job_without_an_origin_records_its_own_subtasks_as_the_plan(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    team.on("goal a", recruit("helper", "prices"), finish("A done"))
    runner.run(make_job(clock.now(), sub("a"), sub("b", after=["a"])))
    [run] = runs(deps, clock.now())
    assert run.request == "the user's request"
    assert [(s.id, s.depends_on) for s in run.plan] == [("a", []), ("b", ["a"])]  # no helper
    assert run.strategy_id == strategy_for_job("t1-job0")


def test_failures_and_retries_make_a_partial_or_aborted_run(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    team.on("goal x", *[call("lookup", query=str(n)) for n in range(3)])
    job = make_job(clock.now(), sub("x", agent="brief"), sub("y"), job_type="default")
    assert runner.run(job).status == "done"  # one of two failed: below the threshold
    [run] = runs(deps, clock.now())
    assert run.outcome == "partial"
    assert [(f.subtask_id, f.error.split(":")[0]) for f in run.failures] == [("x", "step_limit")]

    team.on("goal z", *[call("lookup", query=str(n)) for n in range(3)])
    lone = make_job(clock.now(), sub("z", agent="brief"), job_id="t2-job0")
    assert runner.run(lone).status == "aborted"
    assert {r.job_id: r.outcome for r in runs(deps, clock.now())}["t2-job0"] == "aborted"


@pytest.mark.parametrize(("source", "penalties"), [("user", 1), ("timeout", 0)])
def test_a_step_the_user_refused_counts_against_the_strategy_a_timeout_does_not(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps, source: str, penalties: int
) -> None:
    team.on("goal a", call("send", query="to Bea"), finish("Did not send."))
    runner.run(make_job(clock.now(), sub("a")))
    interrupt = runner.state().interrupt
    assert interrupt is not None
    continue_job(deps, "alice", "c1", "t1-job0", interrupt.id, "reject", source)  # type: ignore[arg-type]
    assert runner.run(runner.published()[-1], "m-2").status == "done"
    [run] = runs(deps, clock.now())
    assert run.penalties == penalties


def test_an_escalated_job_is_recorded_as_escalated(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    team.on("goal a", *[call("lookup", query="the same")] * 15)
    runner.run(make_job(clock.now(), sub("a")))
    assert runs(deps, clock.now()) == []  # waiting on the user: not finished
    interrupt = runner.state().interrupt
    assert interrupt is not None
    continue_job(deps, "alice", "c1", "t1-job0", interrupt.id, "abort", "user")
    assert runner.run(runner.published()[0], "m-2").status == "cancelled"
    [run] = runs(deps, clock.now())
    assert run.outcome == "escalated"


def test_a_job_whose_account_is_erased_while_it_runs_records_nothing(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    def erased_meanwhile(_: LLMRequest) -> dict[str, str]:
        clock.advance(1)
        deps.facts.delete_user("alice", clock.now())  # the memory function's erasure
        return finish("done, too late")

    team.on("goal a", erased_meanwhile)
    assert runner.run(make_job(clock.now(), sub("a"))).status == "done"
    assert runs(deps, clock.now() - timedelta(seconds=1)) == []
