"""The watchdog's ladder on a scripted agent that loops: whisper, stronger whisper, then the
job pauses and escalates to the user and the operators; an OK evaluation resets it."""

from __future__ import annotations

import pytest

from shared.app.agent_continuation import continue_job
from shared.deps import Deps
from shared.fakes.clock import FixedClock
from shared.models.jobs import StepRecord
from shared.ports import LLMRequest
from shared.services.agent_jobs.watchdog import spiraling
from tests.unit.agents.agent_kit import (
    EchoTool,
    Runner,
    ScriptedCatalog,
    TeamModel,
    agent,
    call,
    finish,
    make_job,
    sub,
)


@pytest.fixture
def runner(deps: Deps) -> Runner:
    return Runner(deps, ScriptedCatalog([agent("worker", ["lookup"])], [EchoTool()]))


def notes_in(request: LLMRequest) -> list[str]:
    return [line for line in request.messages[-1].text.splitlines() if "[Private note" in line]


def test_a_looping_agent_is_whispered_twice_then_escalated(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    requests: list[LLMRequest] = []

    def loop(request: LLMRequest) -> dict[str, str]:
        requests.append(request)
        return call("lookup", query="the same")

    team.on("goal a", *[loop] * 15)
    job = make_job(clock.now(), sub("a"))
    assert runner.run(job).status == "waiting"

    assert team.watchdog_calls == 0  # the deterministic check saw the loop
    whispered = {i + 1: notes_in(r) for i, r in enumerate(requests) if notes_in(r)}
    assert list(whispered) == [6, 11]  # the steps after the 5th and the 10th
    assert "[CORRECTION]" in whispered[6][0] and "Second notice" in whispered[11][0]
    state = runner.state()
    assert [w.level for w in state.whispers] == [1, 2, 3]
    assert state.status == "waiting" and state.interrupt is not None
    assert state.interrupt.purpose == "escalation" and state.interrupt.opened
    control = deps.conversations.get_chat("alice", "c1").control  # type: ignore[union-attr]
    assert control.target == "job" and control.thread_id == "t1-job0"
    assert [o.id for o in control.interrupt.options] == ["resume", "abort"]  # type: ignore[union-attr]
    assert control.timeout_at is None  # an escalation waits for the user
    [(event, payload)] = deps.operator_alerts.alerts  # type: ignore[attr-defined]
    assert (event, payload["verdict"], payload["job_id"]) == (
        "agent_escalation", "SPIRALING", "t1-job0",
    )  # fmt: skip

    # The user resumes: the agent goes on from its 15 steps, the ladder starts again.
    team.on("goal a", finish("found another way"))
    continue_job(deps, "alice", "c1", "t1-job0", state.interrupt.id, "resume", "user")
    [continuation] = runner.published()
    assert runner.run(continuation, "m-2").status == "done"
    assert runner.chat()["t1-job0-result"] == "found another way"
    assert runner.state().subtasks[0].watchdog_level == 0
    assert runner.run(continuation, "m-2").status == "duplicate"  # answered once


def test_aborting_an_escalated_job_stops_it(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    team.on("goal a", *[call("lookup", query="again")] * 15)
    runner.run(make_job(clock.now(), sub("a")))
    interrupt = runner.state().interrupt
    assert interrupt is not None
    continue_job(deps, "alice", "c1", "t1-job0", interrupt.id, "abort", "user")
    assert runner.run(runner.published()[0], "m-2").status == "cancelled"
    assert runner.chat()["t1-job0-result"].startswith("Stopped working on")


def test_the_model_evaluation_whispers_once_and_an_ok_resets_the_ladder(
    runner: Runner, team: TeamModel, clock: FixedClock
) -> None:
    team.on("goal a", *[call("lookup", query=f"q{n}") for n in range(12)], finish("done"))
    team.verdicts("DRIFT", "OK")  # at the 5th and the 10th step
    assert runner.run(make_job(clock.now(), sub("a"))).status == "done"
    state = runner.state()
    assert team.watchdog_calls == 2
    assert [(w.verdict, w.level) for w in state.whispers] == [("DRIFT", 1)]
    assert state.subtasks[0].watchdog_level == 0


def test_the_spiral_check_needs_the_same_call_with_the_same_result() -> None:
    same = StepRecord(action="tool", tool="lookup", args='{"q":1}', result="x")
    assert spiraling([same] * 3)
    assert not spiraling([same] * 2)
    assert not spiraling([same, same, same.model_copy(update={"result": "new"})])
    assert not spiraling([same, same.model_copy(update={"args": '{"q":2}'}), same])
