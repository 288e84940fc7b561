"""The user's control of a job: pause and resume between steps, cancel, take over."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from shared.app import agent_control as control
from shared.deps import Deps
from shared.errors import JobNotActive, NotFound
from shared.fakes.clock import FixedClock
from shared.fakes.scripted_llm import Reply
from shared.ports import LLMRequest
from tests.unit.agents.agent_kit import (
    EchoTool,
    Runner,
    ScriptedCatalog,
    TeamModel,
    agent,
    call,
    finish,
    make_job,
    noting,
    sub,
)


@pytest.fixture
def runner(deps: Deps) -> Runner:
    return Runner(deps, ScriptedCatalog([agent("worker", ["lookup"])], [EchoTool()]))


def while_running(deps: Deps, command: str) -> Callable[[LLMRequest], Reply]:
    """A step during which the user sends ``command``."""

    def reply(_request: LLMRequest) -> Reply:
        getattr(control, command)(deps, "alice", "t1-job0")
        return call("lookup", query="first")

    return reply


def test_a_paused_job_stops_between_steps_and_resumes_where_it_was(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    seen: list[str] = []
    team.on("goal a", while_running(deps, "pause"), noting(seen, finish("a done")))
    job = make_job(clock.now(), sub("a"), sub("b", after=["a"]))
    assert runner.run(job).status == "paused"
    state = runner.state()
    assert state.status == "paused" and state.lease_owner is None
    assert [len(s.steps) for s in state.subtasks] == [1, 0]  # a's first step is kept
    assert runner.run(job, "m-redelivered").status == "paused"  # nothing runs meanwhile

    control.resume(deps, "alice", "t1-job0")
    [again] = runner.published()
    assert runner.run(again, "m-2").status == "done"
    assert seen == ["Result: nothing new"]  # it went on after its kept step
    assert team.steps.count("goal a") == 2


def test_a_cancelled_job_stops_before_its_next_step(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    team.on("goal a", while_running(deps, "cancel"))
    job = make_job(clock.now(), sub("a"), sub("b", after=["a"]))
    assert runner.run(job).status == "cancelled"
    assert team.steps == ["goal a"]
    assert runner.chat()["t1-job0-result"].startswith("Stopped working on")
    with pytest.raises(JobNotActive):
        control.resume(deps, "alice", "t1-job0")


def test_taking_over_a_paused_job_returns_its_context(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    team.on("goal b", while_running(deps, "pause"))
    job = make_job(clock.now(), sub("a"), sub("b", after=["a"]), sub("c", after=["b"]))
    assert runner.run(job).status == "paused"

    context = control.takeover(deps, "alice", "t1-job0")
    assert context.status == "cancelled"
    assert [(s.id, s.status, s.result) for s in context.subtasks] == [
        ("a", "done", "done: goal a"), ("b", "pending", ""), ("c", "pending", ""),
    ]  # fmt: skip
    assert context.subtasks[1].last_steps == ["tool lookup : nothing new"]
    assert runner.chat()["t1-job0-result"].startswith("Stopped working on")
    assert control.takeover(deps, "alice", "t1-job0") == context  # a retried request


def test_a_finished_job_cannot_be_controlled(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    assert runner.run(make_job(clock.now(), sub("a"))).status == "done"
    for command in ("pause", "resume", "cancel", "takeover"):
        with pytest.raises(JobNotActive):
            getattr(control, command)(deps, "alice", "t1-job0")


def test_control_of_an_unknown_job(runner: Runner, deps: Deps) -> None:
    with pytest.raises(NotFound):
        control.pause(deps, "alice", "nope")
    with pytest.raises(NotFound):
        control.cancel(deps, "bob", "t1-job0")
