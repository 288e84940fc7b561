"""The supervisor policy on fakes: DAG order and parallelism, retries, failure thresholds,
recruitment and its cap, the mailbox, the token budget."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from shared.deps import Deps
from shared.errors import DependencyUnavailable, ModelOutputInvalid
from shared.fakes.clock import FixedClock
from shared.fakes.scripted_llm import Reply
from shared.models.jobs import JobState, JobType, SubtaskState
from shared.ports import LLMRequest
from shared.services.agent_jobs import jobstate
from shared.services.agent_jobs.policy import backoff_seconds, failure_limit, job_type_for
from tests.unit.agents.agent_kit import (
    EchoTool,
    Runner,
    ScriptedCatalog,
    TeamModel,
    agent,
    call,
    finish,
    make_job,
    message,
    noting,
    recruit,
    sub,
)

BROKEN = (ModelOutputInvalid("bad"), ModelOutputInvalid("bad again"))  # fails for good


@pytest.fixture
def runner(deps: Deps) -> Runner:
    return Runner(deps, ScriptedCatalog())


def test_independent_subtasks_run_at_once_and_dependents_get_their_results(
    runner: Runner, team: TeamModel, clock: FixedClock
) -> None:
    both_running = threading.Barrier(2, timeout=5)  # only passes if a and b run in parallel

    def together(name: str) -> Callable[[LLMRequest], Reply]:
        def reply(_request: LLMRequest) -> Reply:
            both_running.wait()
            return finish(f"{name} found")

        return reply

    team.on("goal a", together("A"))
    team.on("goal b", together("B"))
    seen: list[str] = []
    team.on("goal c", noting(seen, finish("C sums up"), first=True))
    job = make_job(clock.now(), sub("a"), sub("b"), sub("c", after=["a", "b"]))

    assert runner.run(job).status == "done"
    assert "Result of a: A found" in seen[0] and "Result of b: B found" in seen[0]
    chat = runner.chat()
    assert chat["t1-job0-result"] == "C sums up"  # the last subtask's answer
    assert {"t1-job0-a", "t1-job0-b", "t1-job0-c"} <= set(chat)  # progress, one each
    kinds = runner.kinds()
    assert [kinds[f"t1-job0-{s}"] for s in "abc"] == [("progress", None)] * 3
    assert kinds["t1-job0-result"] == ("result", None)
    assert [s.status for s in runner.state().subtasks] == ["done", "done", "done"]


def test_the_seed_example_runs_its_dependencies_in_order(
    runner: Runner, team: TeamModel, clock: FixedClock
) -> None:
    job = make_job(
        clock.now(),
        *(sub(s) for s in "ABCD"),
        sub("E", after="ABCD"),
        sub("F", after="E"),
    )
    assert runner.run(job).status == "done"
    order = team.steps
    assert set(order[:4]) == {f"goal {s}" for s in "ABCD"}
    assert order[4:] == ["goal E", "goal F"]
    assert runner.chat()["t1-job0-result"] == "done: goal F"


def test_transient_failures_are_retried_with_backoff_then_succeed(
    runner: Runner, team: TeamModel, clock: FixedClock
) -> None:
    team.on("goal a", DependencyUnavailable("model down"), DependencyUnavailable("still"))
    assert runner.run(make_job(clock.now(), sub("a"))).status == "done"
    s = runner.deps.settings
    assert (
        runner.sleeps
        == [
            backoff_seconds(n, s.agent_retry_base_seconds, s.agent_retry_max_seconds, lambda: 0.5)
            for n in (1, 2)
        ]
        == [0.375, 0.75]
    )  # exponential, with the jitter's half
    assert runner.state().subtasks[0].attempts == 3


def test_a_tool_outage_repeats_the_step(
    deps: Deps, team: TeamModel, clock: FixedClock, runner: Runner
) -> None:
    tool = EchoTool(outages=2)
    runner.catalog = ScriptedCatalog([agent("worker", ["lookup"])], [tool])
    team.on("goal a", call("lookup", query="x"), call("lookup", query="x"),
            call("lookup", query="x"), finish("found"))  # fmt: skip
    assert runner.run(make_job(clock.now(), sub("a"))).status == "done"
    assert len(tool.calls) == 1 and len(runner.sleeps) == 2


def test_a_subtask_failing_every_retry_fails_as_transient(
    runner: Runner, team: TeamModel, clock: FixedClock
) -> None:
    team.on("goal a", *[DependencyUnavailable("down")] * 4)
    team.on("goal b", finish("fine"))
    job = make_job(clock.now(), sub("a"), sub("b"))
    assert runner.run(job).status == "done"  # one of two failed: below the threshold
    failed = runner.state().subtasks[0]
    assert (failed.status, failed.transient, failed.attempts) == ("failed", True, 4)
    assert len(runner.sleeps) == 3
    assert "1 of 2 parts failed" in runner.chat()["t1-job0-result"]


@pytest.mark.parametrize(
    ("job_type", "tolerated"), [("default", 3), ("research", 3), ("data", 1), ("critical", 0)]
)
def test_failures_below_the_threshold_continue_and_at_it_abort(
    runner: Runner, team: TeamModel, clock: FixedClock, job_type: JobType, tolerated: int
) -> None:
    assert failure_limit(job_type, 6) == tolerated + 1
    for failures, status in ((tolerated, "done"), (tolerated + 1, "aborted")):
        job_id = f"t{failures}-job0"
        for index in range(failures):
            team.on(f"{job_id} {index}", *BROKEN)
        subtasks = [sub(f"s{i}", goal=f"{job_id} {i}") for i in range(6)]
        job = make_job(clock.now(), *subtasks, job_type=job_type, job_id=job_id)
        assert runner.run(job).status == status, (job_type, failures)
        report = runner.chat()[f"{job_id}-result"]
        if failures:
            assert f"{failures} of 6 parts failed" in report
        if status == "aborted":
            assert report.startswith("I stopped working on")


def test_a_subtask_after_a_failed_one_still_runs_and_is_told(
    runner: Runner, team: TeamModel, clock: FixedClock
) -> None:
    team.on("goal a", *BROKEN)
    seen: list[str] = []
    team.on("goal c", noting(seen, finish("partial"), first=True))
    job = make_job(clock.now(), sub("a"), sub("b"), sub("c", after=["a", "b"]))
    assert runner.run(job).status == "done"
    assert "Result of a: (not available: model_output_invalid" in seen[0]


def test_job_types_follow_the_agents() -> None:
    assert job_type_for(["research", "research"]) == "research"
    assert job_type_for(["wealth"]) == "data"
    assert job_type_for(["productivity"]) == "critical"
    assert job_type_for(["research", "wealth"]) == "default"


def test_a_recruited_helper_runs_and_the_dependents_wait_for_it(
    runner: Runner, team: TeamModel, clock: FixedClock
) -> None:
    team.on("goal c", recruit("helper", "pricing deep dive"), finish("compared"))
    seen: list[str] = []
    team.on("goal e", noting(seen, finish("swot"), first=True))
    job = make_job(clock.now(), sub("c"), sub("e", after=["c"]))
    assert runner.run(job).status == "done"
    state = runner.state()
    helper = state.subtask("c-r1")
    assert (helper.status, helper.recruited_by) == ("done", "c")
    assert state.subtask("e").subtask.depends_on == ["c", "c-r1"]
    assert "Result of c-r1: done: pricing deep dive" in seen[0]


def test_recruitment_stops_at_the_team_cap_and_the_budget(
    runner: Runner, team: TeamModel, clock: FixedClock
) -> None:
    told: list[str] = []

    last_result = noting(told, recruit("helper", "one more"))

    team.on("goal s0", recruit("helper", "extra"), last_result, last_result, finish("ok"))
    job = make_job(clock.now(), *(sub(f"s{i}") for i in range(9)))
    assert runner.run(job).status == "done"
    assert len(runner.state().subtasks) == runner.deps.settings.agent_team_cap == 10
    assert told[0].startswith("Result: recruited s0-r1")
    assert "refused: the team is full (10 subtasks)" in told[1]

    team.on("goal b0", recruit("helper", "too costly"), last_result)
    poor = make_job(clock.now(), sub("b0"), job_id="t2-job0", budget_tokens=3000)
    runner.run(poor)
    assert "refused: the job's token budget is nearly spent" in told[-1]


def test_agents_talk_through_the_mailbox(
    runner: Runner, team: TeamModel, clock: FixedClock
) -> None:
    team.on("goal a", message("*", "prices rose 10%"), finish("noted"))
    seen: list[str] = []
    team.on("goal b", noting(seen, finish("adjusted")))
    assert runner.run(make_job(clock.now(), sub("a"), sub("b", after=["a"]))).status == "done"
    assert "Message from a: prices rose 10%" in seen[0]
    assert [m.text for m in runner.state().mailbox] == ["prices rose 10%"]


def test_a_full_mailbox_drops_its_oldest_half() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    state = JobState(
        job=make_job(now, sub("a")),
        subtasks=[SubtaskState(subtask=sub("a"))],
        created_at=now,
        updated_at=now,
    )
    for n in range(1, 6):
        state = jobstate.post(state, "a", "*", f"m{n}", now, capacity=4)
    assert [m.text for m in state.mailbox] == ["m3", "m4", "m5"]
    assert [m.seq for m in state.mailbox] == [3, 4, 5]


def test_a_spent_budget_aborts_the_job(runner: Runner, team: TeamModel, clock: FixedClock) -> None:
    job = make_job(clock.now(), sub("a"), sub("b", after=["a"]), budget_tokens=5)
    assert runner.run(job).status == "aborted"
    assert "it used up its budget" in runner.chat()["t1-job0-result"]
    assert runner.state().subtask("b").status == "pending"  # never started
