"""Sensitive tool calls and questions: the job waits on the chat's interrupt and the answer
continues it, exactly once; a rejection is skipped (or aborts a required action). Then the
same answered the way a client does: through the resume service, the approval timeout and
the user's cancel; and the job's outcome in the user's trust record."""

from __future__ import annotations

import pytest

from shared.app import agent_control as control
from shared.app.agent_continuation import continue_job
from shared.app.resume import ResumeService
from shared.app.turn import TurnService
from shared.deps import Deps
from shared.errors import InterruptNotPending, JobInProgress
from shared.fakes.clock import FixedClock
from shared.fakes.scripted_llm import ScriptedLLM
from shared.models.domain import HitlControl, Message, ToolCall
from shared.models.wire import Interrupt, ResumeRequest
from shared.services.agent_jobs.loop import DECLINED
from tests.unit.agents.agent_kit import (
    EchoTool,
    Runner,
    ScriptedCatalog,
    TeamModel,
    agent,
    ask,
    call,
    finish,
    make_job,
    noting,
    sub,
)
from tests.unit.turn_kit import classification, request


@pytest.fixture
def runner(deps: Deps, send: EchoTool) -> Runner:
    return Runner(deps, ScriptedCatalog([agent("worker", ["send"])], [send]))


def answer(runner: Runner, option: str, source: str = "user", text: str = "") -> str:
    state = runner.state()
    assert state.interrupt is not None
    continue_job(runner.deps, "alice", "c1", "t1-job0", state.interrupt.id, option, source,  # type: ignore[arg-type]
                 answer=text)  # fmt: skip
    return runner.run(runner.published()[-1], f"m-{option}").status


def test_an_approved_call_runs_once_with_the_approval_key(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps, send: EchoTool
) -> None:
    team.on("goal a", call("send", query="to Bea"), finish("Sent it."))
    job = make_job(clock.now(), sub("a"))
    assert runner.run(job).status == "waiting"
    assert send.calls == []
    control = deps.conversations.get_chat("alice", "c1").control  # type: ignore[union-attr]
    asked = control.interrupt
    assert asked is not None and asked.kind == "approval" and asked.id == "t1-job0-a-q1"
    assert (control.target, control.thread_id, control.status) == ("job", "t1-job0", "pending")
    assert "send" in asked.question and "to Bea" in asked.question
    assert runner.chat()[asked.id] == asked.question  # the question is in the chat
    assert runner.kinds()[asked.id] == ("question", asked.id)  # and says it is one
    [timeout] = [t for t in deps.tasks.tasks if t.queue == "hitl-timeouts"]  # type: ignore[attr-defined]
    assert timeout.name == f"hitl-timeout-{asked.id}"
    assert runner.run(job, "m-again").status == "waiting"  # a redelivery waits too

    assert answer(runner, "approve") == "done"
    assert send.calls == [('{"query":"to Bea"}', f"t1-job0:{asked.id}")]
    assert runner.chat()["t1-job0-result"] == "Sent it."
    assert runner.kinds()["t1-job0-result"] == ("result", None)
    assert runner.run(runner.published()[-1], "m-dup").status == "duplicate"
    assert len(send.calls) == 1


def test_a_rejected_call_is_skipped_and_the_agent_is_told(
    runner: Runner, team: TeamModel, clock: FixedClock, send: EchoTool
) -> None:
    told: list[str] = []
    team.on("goal a", call("send", query="x"), noting(told, finish("Not sent.")))
    runner.run(make_job(clock.now(), sub("a")))
    assert answer(runner, "reject", source="timeout") == "done"
    assert send.calls == [] and told == [f"Result: {DECLINED}"]


def test_a_rejected_required_action_aborts_the_job(
    runner: Runner, team: TeamModel, clock: FixedClock, send: EchoTool
) -> None:
    team.on("goal a", call("send", query="x"))
    job = make_job(clock.now(), sub("a", required=True), sub("b"), job_type="research")
    runner.run(job)
    assert answer(runner, "reject") == "aborted"
    assert "an action it needs was not approved" in runner.chat()["t1-job0-result"]


def test_a_question_waits_while_the_chat_asks_another_then_times_out(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps, send: EchoTool
) -> None:
    other = HitlControl(
        status="pending",
        interrupt=Interrupt(id="turn-q", kind="disambiguation", question="Which Anna?"),
    )
    question = Message(id="turn-q", role="assistant", text="Which Anna?", created_at=clock.now())
    assert deps.conversations.open_interrupt("alice", "c1", other, question, clock.now())
    team.on("goal a", call("send", query="x"), finish("went on"))
    job = make_job(clock.now(), sub("a"))
    for delivery in range(deps.settings.agent_max_deliveries - 2):
        with pytest.raises(JobInProgress):  # non-2xx: Pub/Sub delivers again later
            runner.run(job, f"m-{delivery}")
        interrupt = runner.state().interrupt
        assert interrupt is not None and interrupt.open_attempts == delivery + 1
    assert runner.run(job, "m-last").status == "done"  # never shown: taken as unanswered
    assert send.calls == [] and runner.chat()["t1-job0-result"] == "went on"


def test_a_clarification_takes_the_users_words(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    seen: list[str] = []
    team.on("goal a", ask("For how many people?"), noting(seen, finish("booked for 4")))
    runner.run(make_job(clock.now(), sub("a")))
    control = deps.conversations.get_chat("alice", "c1").control  # type: ignore[union-attr]
    assert control.interrupt is not None and control.interrupt.kind == "clarification"
    assert answer(runner, "answer", text="four of us") == "done"
    assert seen == ["Result: The user answered: four of us"]


def _question(deps: Deps) -> Interrupt:
    chat = deps.conversations.get_chat("alice", "c1")
    assert chat is not None and chat.control.interrupt is not None
    return chat.control.interrupt


def _answer(deps: Deps, words: str, interrupt_id: str | None = None) -> str:
    asked = interrupt_id or _question(deps).id
    request = ResumeRequest(chat_id="c1", interrupt_id=asked, answer=words)
    service = ResumeService(deps)
    return service.turns.run_prepared(service.prepare("alice", request)).reply.text


def test_approving_through_resume_continues_the_job_once(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps, send: EchoTool
) -> None:
    team.on("goal a", call("send", query="to Bea"), finish("Sent it."))
    runner.run(make_job(clock.now(), sub("a")))
    asked = _question(deps)
    assert _answer(deps, "yes") == "Thanks, I'll carry on with that."
    said = [m.kind for m in deps.conversations.recent_messages("alice", "c1", 10)]
    assert said == ["question", "text", "text"]  # asked, the choice, "I'll carry on"
    with pytest.raises(InterruptNotPending):
        _answer(deps, "yes", asked.id)  # a double tap: the job goes on once
    [continuation] = runner.published()
    assert runner.run(continuation, "m-2").status == "done"
    assert send.calls == [('{"query":"to Bea"}', f"t1-job0:{asked.id}")]
    chat = deps.conversations.get_chat("alice", "c1")
    assert chat is not None and chat.control.status == "idle"


def test_a_clarification_is_answered_with_the_users_words(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    seen: list[str] = []
    team.on("goal a", ask("For how many people?"), noting(seen, finish("booked for 4")))
    runner.run(make_job(clock.now(), sub("a")))
    _answer(deps, "four of us")
    runner.run(runner.published()[-1], "m-2")
    assert seen == ["Result: The user answered: four of us"]
    texts = [m.text for m in deps.conversations.recent_messages("alice", "c1", 10)]
    assert "four of us" in texts  # recorded as the user typed it


def test_an_unanswered_clarification_times_out_without_an_answer(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    seen: list[str] = []
    team.on("goal a", ask("For how many people?"), noting(seen, finish("skipped")))
    runner.run(make_job(clock.now(), sub("a")))
    prepared = ResumeService(deps).time_out("alice", "c1", _question(deps).id)
    assert prepared is not None
    ResumeService(deps).turns.run_prepared(prepared)
    assert runner.run(runner.published()[-1], "m-2").status == "done"
    assert seen and "answer" in seen[0].lower() and "four" not in seen[0]


def test_cancelling_a_waiting_job_takes_its_question_off_the_chat(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    team.on("goal a", call("send", query="x"))
    runner.run(make_job(clock.now(), sub("a")))
    asked = _question(deps)
    assert control.cancel(deps, "alice", "t1-job0").status == "cancelled"
    chat = deps.conversations.get_chat("alice", "c1")
    assert chat is not None and chat.control.status == "idle"
    request = ResumeRequest(chat_id="c1", interrupt_id=asked.id, answer="approve")
    with pytest.raises(InterruptNotPending):
        ResumeService(deps).prepare("alice", request)


def test_a_finished_job_counts_for_the_users_trust(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    team.on("goal a", finish("done a"))
    runner.run(make_job(clock.now(), sub("a")))
    runner.run(make_job(clock.now(), sub("a"), job_id="t2-job0"), "m-2")  # the same again
    record = deps.trust.get("alice")
    assert (record.tasks_completed, record.tasks_failed) == (2, 0)
    runner.run(make_job(clock.now(), sub("a")), "m-3")  # a redelivery counts nothing
    assert deps.trust.get("alice").tasks_completed == 2


def test_a_typed_yes_answers_the_jobs_approval(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps, send: EchoTool
) -> None:
    team.on("goal a", call("send", query="to Bea"), finish("Sent it."))
    runner.run(make_job(clock.now(), sub("a")))
    asked = _question(deps)
    typed = TurnService(deps).run("alice", request("yes please", cmid="m9", chat_id="c1"))
    assert typed.reply.text == "Thanks, I'll carry on with that."
    assert runner.run(runner.published()[-1], "m-2").status == "done"
    assert send.calls == [('{"query":"to Bea"}', f"t1-job0:{asked.id}")]
    texts = [m.text for m in deps.conversations.recent_messages("alice", "c1", 10)]
    assert "yes please" in texts  # what the user typed, not the option's label


def test_a_typed_reply_answers_a_clarification_and_a_new_request_does_not(
    runner: Runner, team: TeamModel, clock: FixedClock, deps: Deps
) -> None:
    seen: list[str] = []
    team.on("goal a", ask("For how many people?"), noting(seen, finish("booked for 4")))
    runner.run(make_job(clock.now(), sub("a")))
    question = _question(deps)
    team.others(classification(), "Sunny.")
    TurnService(deps).run(  # a question of the user's own: not an answer
        "alice", request("What's the weather like tomorrow in Bern?", cmid="m8", chat_id="c1")
    )
    assert _question(deps) == question
    TurnService(deps).run("alice", request("four of us", cmid="m9", chat_id="c1"))
    runner.run(runner.published()[-1], "m-2")
    assert seen == ["Result: The user answered: four of us"]


def test_acting_calls_wait_for_approval_only_while_the_user_is_in_command(
    deps: Deps, team: TeamModel, clock: FixedClock
) -> None:
    booker = EchoTool(name="calendar_add", description="Book.", acts=True, answer="booked")
    runner = Runner(deps, ScriptedCatalog([agent("worker", ["calendar_add"])], [booker]))
    team.on("goal a", call("calendar_add", query="Friday"), finish("Booked."))
    assert runner.run(make_job(clock.now(), sub("a"))).status == "waiting"  # a novice
    assert booker.calls == []
    deps.trust.put_settings("alice", "human_in_the_loop", clock.now())
    team.on("goal b", call("calendar_add", query="Friday"), finish("Booked."))
    job = make_job(clock.now(), sub("b"), job_id="t2-job0")
    assert runner.run(job, "m-2").status == "done"  # not sensitive: runs unasked
    assert booker.calls == [('{"query":"Friday"}', None)]


def test_a_known_call_is_asked_about_then_made_without_a_model_step(
    runner: Runner, clock: FixedClock, llm: ScriptedLLM, send: EchoTool
) -> None:
    """A step whose call the plan read (``Subtask.call``) and the turn did not approve."""
    known = ToolCall(tool="send", args={"query": "to Bea"})
    assert runner.run(make_job(clock.now(), sub("a", call=known))).status == "waiting"
    asked = runner.state().interrupt
    assert asked is not None and send.calls == []
    assert answer(runner, "approve") == "done"
    assert send.calls == [('{"query":"to Bea"}', f"t1-job0:{asked.id}")]
    assert runner.chat()["t1-job0-result"] == "Done: goal a"
    assert llm.calls == []


def test_a_known_call_approved_in_the_turn_is_made_at_once_and_once(
    runner: Runner, clock: FixedClock, llm: ScriptedLLM, send: EchoTool
) -> None:
    known = ToolCall(tool="send", args={"query": "to Bea"}, approved=True)
    job = make_job(clock.now(), sub("a", call=known))
    assert runner.run(job).status == "done"
    assert runner.run(job, "m-again").status == "duplicate"
    assert send.calls == [('{"query":"to Bea"}', "t1-job0:a:planned")]
    assert llm.calls == []


def test_a_declined_known_call_is_reported_and_a_refused_one_fails(
    runner: Runner, clock: FixedClock, send: EchoTool
) -> None:
    runner.run(make_job(clock.now(), sub("a", call=ToolCall(tool="send", args={}))))
    assert answer(runner, "reject") == "done"
    assert runner.chat()["t1-job0-result"] == "Not done: you declined it."
    broken = ToolCall(tool="erase", args={"query": "x"}, approved=True)  # not offered
    assert runner.run(make_job(clock.now(), sub("a", call=broken), job_id="t2-job0"), "m-2")
    assert send.calls == []
    state = runner.state("t2-job0")
    assert state.subtasks[0].status == "failed" and "tool_refused" in state.subtasks[0].error
