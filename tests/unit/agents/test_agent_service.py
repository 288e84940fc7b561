"""Agent job delivery on fakes: claim once, expiry, crash and takeover, busy jobs, push
decoding, and the one job a turn publishes."""

from __future__ import annotations

import base64
import json
from datetime import timedelta

import pytest
from pydantic import BaseModel

from shared.agents.spec import ToolContext
from shared.app.agent_delivery import job_from_push
from shared.app.resume import ResumeService
from shared.app.turn import TurnService
from shared.deps import Deps
from shared.errors import DependencyUnavailable, InvalidEvent, JobInProgress, ModelOutputInvalid
from shared.fakes.clock import FixedClock
from shared.models.jobs import AgentJob
from shared.services.agent_jobs import claims
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
from tests.unit.turn_kit import classification, request


def job(clock: FixedClock, job_id: str = "t1-job0") -> AgentJob:
    return AgentJob(
        job_id=job_id,
        user_id="alice",
        chat_id="c1",
        turn_id="t1",
        agent="research",
        goal="Summarise my notes",
        created_at=clock.now(),
    )


@pytest.fixture
def runner(deps: Deps) -> Runner:
    return Runner(deps, ScriptedCatalog())


def test_a_job_runs_once_and_posts_its_result(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    team.on("Summarise my notes", finish("Here is the summary."))
    assert runner.run(job(clock), "m-1").status == "done"
    assert runner.run(job(clock), "m-2").status == "duplicate"  # redelivery
    [message] = deps.conversations.recent_messages("alice", "c1", 10)
    assert (message.id, message.role, message.text) == (
        "t1-job0-result", "assistant", "Here is the summary.",
    )  # fmt: skip
    assert team.steps == ["Summarise my notes"]


def test_an_expired_job_is_not_run_and_the_chat_is_told_once(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    old = job(clock)
    clock.advance(runner.deps.settings.max_event_age_seconds + 1)
    assert runner.run(old, "m-1").status == "expired"
    assert runner.run(old, "m-2").status == "expired"  # redelivered
    assert team.steps == [] and runner.deps.jobs.get("alice", "t1-job0") is None
    [notice] = deps.conversations.recent_messages("alice", "c1", 10)
    assert (notice.id, notice.kind) == ("t1-job0-expired", "notice")
    assert notice.text == (
        "I could not start on “Summarise my notes”: it waited too long before it could run. "
        "Ask me again if you still need it."
    )


def test_a_late_redelivery_of_a_finished_job_says_nothing_more(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    team.on("Summarise my notes", finish("Here is the summary."))
    done = job(clock)
    assert runner.run(done, "m-1").status == "done"
    clock.advance(runner.deps.settings.max_event_age_seconds + 1)
    assert runner.run(done, "m-2").status == "expired"
    messages = deps.conversations.recent_messages("alice", "c1", 10)
    assert [m.id for m in messages] == ["t1-job0-result"]


def test_a_crash_resumes_without_redoing_finished_subtasks(
    runner: Runner, team: TeamModel, clock: FixedClock
) -> None:
    tool = EchoTool()
    runner.catalog = ScriptedCatalog([agent("worker", ["lookup"])], [tool])
    team.on("goal b", call("lookup", query="x"))

    def bug(context: ToolContext, args: BaseModel) -> str:
        raise KeyError("a bug")

    tool.run = bug  # type: ignore[method-assign]
    crashing = make_job(clock.now(), sub("a"), sub("b", after=["a"]))
    with pytest.raises(KeyError):  # a bug: the delivery fails, Pub/Sub redelivers
        runner.run(crashing)
    state = runner.state()
    assert [s.status for s in state.subtasks] == ["done", "pending"]
    assert state.lease_owner is None  # given up: the redelivery need not wait

    del tool.run  # fixed
    team.on("goal b", call("lookup", query="x"), finish("b done"))
    assert runner.run(crashing, "m-2").status == "done"
    assert team.steps.count("goal a") == 1  # not redone
    assert runner.state().deliveries == 2


def test_a_job_held_by_a_live_run_is_retried_until_its_lease_runs_out(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    held = claims.claim(deps, job(clock), owner="other-run")
    assert held.outcome == "claimed"
    with pytest.raises(JobInProgress):
        runner.run(job(clock), "m-2")
    clock.advance(deps.settings.agent_job_lease_seconds + 1)
    assert runner.run(job(clock), "m-3").status == "done"  # the crashed run is taken over


def test_a_stalled_job_is_handed_back_then_reported_on_its_last_delivery(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    outage = [DependencyUnavailable("model down")] * 4
    for delivery in range(1, deps.settings.agent_max_deliveries + 1):
        team.on("Summarise my notes", *outage)
        with pytest.raises(DependencyUnavailable):
            runner.run(job(clock), f"m-{delivery}")
        state = runner.state()
        assert (state.status, state.subtasks[0].status) == ("stalled", "pending")
        stalled = "t1-job0-stalled" in runner.chat()
        assert stalled == (delivery == deps.settings.agent_max_deliveries)
    assert runner.kinds()["t1-job0-stalled"] == ("notice", None)  # told, not asked
    assert [e for e, _ in deps.operator_alerts.alerts] == ["agent_job_stalled"]  # type: ignore[attr-defined]
    team.on("Summarise my notes", finish("recovered"))
    assert runner.run(job(clock), "m-republished").status == "done"  # an operator republished


def test_a_stalled_job_keeps_its_permanent_failures(
    runner: Runner, team: TeamModel, clock: FixedClock
) -> None:
    team.on("goal a", ModelOutputInvalid("bad"), ModelOutputInvalid("bad again"))
    team.on("goal b", *[DependencyUnavailable("down")] * 4)
    with pytest.raises(DependencyUnavailable):  # 2 of 2 failed, one of them transiently
        runner.run(make_job(clock.now(), sub("a"), sub("b")))
    state = runner.state()
    assert [(s.status, s.transient) for s in state.subtasks] == [
        ("failed", False), ("pending", False),
    ]  # fmt: skip
    assert runner.run(make_job(clock.now(), sub("a"), sub("b")), "m-2").status == "done"
    assert team.steps.count("goal a") == 2  # not retried by the redelivery


def test_push_payload_decoding(clock: FixedClock) -> None:
    payload = job(clock).model_dump_json().encode()
    data = {"message": {"data": base64.b64encode(payload).decode(), "messageId": "42"}}
    decoded, message_id = job_from_push(data)
    assert (decoded.job_id, message_id) == ("t1-job0", "42")
    assert [s.id for s in decoded.subtasks] == ["s1"]  # the shorthand: one subtask
    cyclic = job(clock).model_dump(mode="json") | {
        "subtasks": [
            {"id": "a", "agent": "research", "goal": "x", "depends_on": ["b"]},
            {"id": "b", "agent": "research", "goal": "y", "depends_on": ["a"]},
        ]
    }
    for bad in (
        {},
        {"message": {"data": "!!!"}},
        {"message": {"data": base64.b64encode(b"{}").decode()}},
        {"message": {"data": base64.b64encode(json.dumps(cyclic).encode()).decode()}},
    ):
        with pytest.raises(InvalidEvent):
            job_from_push(bad)


def test_a_turn_publishes_one_job_holding_its_published_steps(
    deps: Deps, team: TeamModel, clock: FixedClock
) -> None:
    plan = {
        "steps": [
            {"id": "s1", "agent": "research", "goal": "find hotels in Rome"},
            {"id": "s2", "agent": "research", "goal": "find flights to Rome"},
            {"id": "s3", "agent": "research", "goal": "compare", "depends_on": ["s1", "s2"]},
        ]
    }
    team.others(classification("complex"), plan, "Started.")
    response = TurnService(deps).run("alice", request("Plan my Rome trip"))
    messages = deps.publisher.messages  # type: ignore[attr-defined]
    [published] = [AgentJob.model_validate_json(m.data) for m in messages]
    assert published.job_id == f"{response.turn_id}-job0"
    assert [(s.id, s.depends_on) for s in published.subtasks] == [
        ("s1", []), ("s2", []), ("s3", ["s1", "s2"]),
    ]  # fmt: skip
    assert (published.goal, published.job_type) == ("Plan my Rome trip", "research")


def test_a_later_delivery_after_the_end_changes_nothing(
    runner: Runner, team: TeamModel, clock: FixedClock
) -> None:
    runner.run(make_job(clock.now(), sub("a"), sub("b")))
    before = (runner.state(), runner.chat(), list(team.steps))
    clock.advance(timedelta(minutes=5).total_seconds())
    assert runner.run(make_job(clock.now(), sub("a"), sub("b")), "m-9").status == "duplicate"
    assert (runner.state(), runner.chat(), team.steps) == before


def test_a_job_issued_before_the_account_was_erased_writes_nothing(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    team.on("goal a", finish("done a"))
    job = make_job(clock.now(), sub("a"))
    clock.advance(1)
    deps.facts.delete_user("alice", clock.now())
    assert runner.run(job).status == "erased"
    assert deps.jobs.get("alice", job.job_id) is None
    assert deps.conversations.recent_messages("alice", "c1", 10) == []
    assert deps.trust.get("alice").tasks_completed == 0


def test_an_approval_timeout_for_an_erased_account_does_nothing(deps: Deps) -> None:
    assert ResumeService(deps).time_out("alice", "gone-chat", "some-interrupt") is None
