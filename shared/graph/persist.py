"""What a finished turn writes: its two messages, its record (response + metadata), the
chat's update, the background work. One Firestore commit, which also ends the run (releases
the turn's lease and the chat) unless a question will wait on a checkpoint; the queued work
first, so a failure before the commit leaves the claim to be retried and re-sends the same
names. Work a
queue could not take (an outage) is kept in the turn record's outbox, in the same commit,
and sent later; the turn is answered all the same.

A failed turn (a node raised) writes the user's message and the fallback reply, records the
failure in the metadata, keeps the chat's pending question, and hands off nothing. So does a
turn whose reply was interrupted (a newer message asked it to stop): its partial reply is
kept, marked ``interrupted``.
A turn
that refused a plan's step, or said "that was wrong" to a job's result, marks the plan's
strategy down (``plan_history.learn_from_turn``).
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta

from shared.errors import NodeFailed
from shared.graph import plan_history
from shared.graph.context import TurnContext
from shared.graph.metering import cost_usd
from shared.graph.routing import after_response
from shared.graph.state import ResponseState, TurnState
from shared.models.domain import (
    ChatUpdate,
    ExtractionTask,
    Handoff,
    HitlControl,
    Message,
    ToolCall,
    TurnMetadata,
    UnderstandingUse,
)
from shared.models.jobs import AgentJob, Subtask
from shared.models.memory import SessionNote
from shared.models.wire import Reply, TurnResponse
from shared.services import handoff, hitl_timeouts
from shared.services.agent_jobs.policy import job_type_for
from shared.services.hitl_timeouts import TimeoutTask
from shared.services.ids import job_id_for
from shared.services.notify import events
from shared.services.questions import waiting_on


def record_turn(
    context: TurnContext, state: TurnState, failure: NodeFailed | None = None
) -> TurnResponse:
    # a speculative reply no writer took (or a failed turn's): never shown; dropping it now
    # charges what it cost to the meter before the record reads it
    context.speculation.drop()
    ports = context.ports
    settings, now = ports.settings, ports.clock.now()
    response = wire_response(context, state)
    halted = failure is not None or interrupted(state)
    extractions = [] if halted else extraction_tasks(context, state)
    jobs = [] if halted else agent_jobs(context, state)
    handoffs = [
        *handoff.extraction_handoffs(settings, extractions, context.trace),
        *handoff.job_handoffs(settings, jobs, context.trace),
        *_timeout(context, state, failure),
    ]
    unsent = handoff.send(ports.tasks, ports.publisher, handoffs)
    if failure is None:
        plan_history.learn_from_turn(context, state)  # once per key: a retry counts nothing
    metadata = turn_metadata(context, state, failure)
    metadata = metadata.model_copy(
        update={
            "extraction_enqueued": bool(extractions),
            "jobs_published": len(jobs),
            "handoffs_unsent": len(unsent),
        }
    )
    finish = ends_in_commit(context, state, failure) and not context.signals.lost.is_set()
    ports.conversations.complete_turn(
        context.user_id,
        context.client_message_id,
        _messages(context, state, now),
        response,
        now,
        new_chat=context.chat_is_new,
        metadata=metadata,
        chat_update=chat_update(context, state, failure),
        outbox=unsent,
        finish=finish,
    )
    if finish:
        context.finished.set()
    return response


def ends_in_commit(context: TurnContext, state: TurnState, failure: NodeFailed | None) -> bool:
    """Whether the completion ends the run, so its commit can release the lease and the chat
    (no separate finishing commit): nothing follows it that the chat must wait for. A failed
    run asks nothing; otherwise the run waits exactly when ``after_response`` sends it to
    ``await_answer``, and then the chat is released only once the checkpoint is saved."""
    if context.finish_in_commit or failure is not None:
        return True
    return after_response(state) != "await_answer"


def interrupted(state: TurnState) -> bool:
    return state.response.kind == "interrupted"


def _timeout(context: TurnContext, state: TurnState, failure: NodeFailed | None) -> list[Handoff]:
    """The approval's deadline, when the turn leaves an approval waiting."""
    control = None if failure or interrupted(state) else next_control(context, state)
    if control is None or control.timeout_at is None or control.interrupt is None:
        return []
    timeout = TimeoutTask(
        user_id=context.user_id, chat_id=context.chat_id, interrupt_id=control.interrupt.id
    )
    settings = context.ports.settings
    task = hitl_timeouts.timeout_task(settings, timeout, control.timeout_at, context.trace)
    # The user is in the chat that asked: told only shortly before the approval expires.
    told = events.question_tasks(
        settings, context.user_id, context.chat_id, control.interrupt,
        context.ports.clock.now(), control.timeout_at,
    )[1:]  # fmt: skip
    return [handoff.task_handoff(task), *(handoff.task_handoff(t) for t in told)]


def wire_response(context: TurnContext, state: TurnState) -> TurnResponse:
    ask = state.hitl.ask
    interrupt = ask.interrupt if ask is not None and ask.blocking else None
    failed = state.response.kind in ("fallback", "interrupted")  # hands nothing off
    return TurnResponse(
        chat_id=context.chat_id,
        turn_id=context.turn_id,
        reply=Reply(text=state.response.text, kind=state.response.kind),
        interrupt=interrupt,
        jobs=[] if failed else [job.job_id for job in agent_jobs(context, state)],
    )


def extraction_tasks(context: TurnContext, state: TurnState) -> list[ExtractionTask]:
    """The turn's extraction, a released question's deferred one, and the chat's new running
    summary: with the turn's extraction, or alone (it becomes session memory)."""
    memory, tasks = state.memory, []
    note = _session_note(context, state)
    if memory.extraction is not None and not memory.extraction_deferred:
        tasks.append(memory.extraction.model_copy(update={"summary": note}))
    elif note is not None:
        conversation = state.conversation
        tasks.append(
            ExtractionTask(
                user_id=context.user_id, chat_id=context.chat_id, turn_id=context.turn_id,
                message_id=conversation.message_id, text="",
                timezone=conversation.profile.timezone, enqueued_at=context.ports.clock.now(),
                facts=False, summary=note,
            )
        )  # fmt: skip
    if state.hitl.released is not None:
        tasks.append(state.hitl.released)
    return tasks


def _session_note(context: TurnContext, state: TurnState) -> SessionNote | None:
    update = state.conversation.new_summary
    if update is None or not update.text:
        return None
    return SessionNote(
        chat_id=context.chat_id,
        summary=update.text[:4000],
        started_at=min(update.since or update.until, update.until),
        covers_until=update.until,
    )


def agent_jobs(context: TurnContext, state: TurnState) -> list[AgentJob]:
    """The turn's one job: the plan steps it published, as subtasks whose dependencies stay
    among them; results of steps the turn ran inline are given as inputs. The id derives
    from the plan's turn and the first published step, so a retry re-sends the same id and
    a later answer to the same plan publishes its own."""
    planning, focus = state.planning, state.conversation.focus
    published = {r.step_id for r in planning.results if r.status == "published"}
    steps = [(index, s) for index, s in enumerate(planning.steps) if s.id in published]
    if not steps:
        return []
    outputs = {r.step_id: r.output for r in planning.results if r.status == "done" and r.output}
    subtasks = [
        Subtask(
            id=step.id,
            agent=step.agent,
            goal=step.inputs.get("goal") or focus,
            depends_on=[d for d in step.depends_on if d in published],
            inputs={f"result of {d}": outputs[d][:4000] for d in step.depends_on if d in outputs},
            call=_approved(step.call) if step.id in planning.approved else step.call,
        )
        for _, step in steps
    ]
    plan_turn = state.conversation.focus_turn_id or context.turn_id  # stable across answers
    job = AgentJob(
        job_id=job_id_for(plan_turn, steps[0][0]),
        user_id=context.user_id,
        chat_id=context.chat_id,
        turn_id=context.turn_id,
        goal=focus if len(subtasks) > 1 else "",
        subtasks=subtasks,
        job_type=job_type_for([s.agent for s in subtasks]),
        origin=plan_history.job_origin(state),
        created_at=context.ports.clock.now(),
    )
    return [job]


def _approved(call: ToolCall | None) -> ToolCall | None:
    """A known call the user approved in the turn: the job makes it without asking again."""
    return call.model_copy(update={"approved": True}) if call is not None else None


def chat_update(
    context: TurnContext, state: TurnState, failure: NodeFailed | None = None
) -> ChatUpdate | None:
    summary = None if failure else state.conversation.new_summary
    control = _released(context, state, failure)
    if summary is None and control is None and context.title is None:
        return None
    return ChatUpdate(
        summary=summary.text if summary else None,
        summarized_until=summary.until if summary else None,
        control=control,
        title=context.title,
    )


def next_control(context: TurnContext, state: TurnState) -> HitlControl | None:
    """The question this run leaves waiting (asked, or kept through a greeting), as the
    chat's pending control record; None if it leaves none."""
    hitl = state.hitl
    question = hitl.ask or (hitl.pending if hitl.outcome == "kept" else None)
    if question is None:
        return None
    timeout = None
    if question.interrupt.kind == "approval":
        seconds = context.ports.settings.approval_timeout_seconds
        timeout = question.asked_at + timedelta(seconds=seconds)
    return waiting_on(
        question.interrupt, "turn", context.thread_id, question.asked_at, timeout, question.blocking
    )


def _released(
    context: TurnContext, state: TurnState, failure: NodeFailed | None
) -> HitlControl | None:
    """An answer this run claimed releases the chat, unless a question waits again (then the
    service leaves it pending once the checkpoint is saved). A failed answer drops its
    question (the fallback says so); runs that claimed nothing leave the record alone."""
    if not context.resumed:
        return None
    if failure is None and not interrupted(state) and next_control(context, state) is not None:
        return None
    return HitlControl()


def turn_metadata(
    context: TurnContext, state: TurnState, failure: NodeFailed | None
) -> TurnMetadata:
    settings, intent, tally = context.ports.settings, state.intent, context.meter.turn
    return TurnMetadata(
        outcome="failed" if failure else "interrupted" if interrupted(state) else "ok",
        error_code=failure.cause.code if failure else None,
        failed_node=failure.node if failure else None,
        route=intent.route if intent else None,
        fast_path=intent.fast_path if intent else False,
        decided_by=intent.decided_by if intent else None,
        understanding=_understanding(state),
        flags=intent.model_dump(include=_FLAGS) if intent else {},
        nodes=state.trace,
        input_tokens=tally.input_tokens,
        output_tokens=tally.output_tokens,
        stopped_tokens=context.meter.stopped.total,
        cost_usd=round(
            cost_usd(
                tally,
                settings.usd_per_million_input_tokens,
                settings.usd_per_million_output_tokens,
            ),
            6,
        ),
        graph_ms=round((time.perf_counter() - context.started) * 1000, 2),
        interrupt_kind=state.hitl.ask.interrupt.kind if state.hitl.ask else None,
        thread_id=context.thread_id or None,
        retrieved=_retrieved(state),
        plan_advice=state.planning.advice,
    )


def _retrieved(state: TurnState) -> list[str]:
    memory = state.memory
    return list(dict.fromkeys([*memory.recalled, *(f.id for f in memory.temporal)]))


def _understanding(state: TurnState) -> UnderstandingUse | None:
    tier = state.intent.tier if state.intent else None
    if tier is None:
        return None
    return tier.model_copy(update={"answer": bool(state.response.quoted)})


_FLAGS = {
    "has_extractable_facts",
    "has_preferences",
    "needs_semantic_retrieval",
    "needs_temporal_retrieval",
}


def _messages(context: TurnContext, state: TurnState, now: datetime) -> list[Message]:
    conversation = state.conversation
    return turn_messages(
        context.turn_id,
        conversation.message_id,
        conversation.user_message,
        state.response,
        now,
        timed_out=state.hitl.timed_out,
    )


def turn_messages(
    turn_id: str,
    message_id: str,
    asked: str,
    reply: ResponseState,
    now: datetime,
    timed_out: bool,
) -> list[Message]:
    """A turn's two messages (its reply only, when the approval timeout answered). A reply
    stopped before its first word is not stored: sent back to the model in a later turn, an
    empty message would be refused (Vertex answers 400 to an empty text part)."""
    answer = reply_message(turn_id, reply, now + timedelta(microseconds=1))
    answers = [answer] if reply.text.strip() else []
    if timed_out:  # nobody typed: the timeout answered
        return answers
    said = Message(id=message_id, role="user", text=asked, created_at=now, turn_id=turn_id)
    return [said, *answers]


def reply_message(turn_id: str, reply: ResponseState, at: datetime) -> Message:
    """The turn's reply as stored: its kind, and for a question the interrupt it asked."""
    asked = reply.interrupt if reply.kind == "question" else None
    return Message(
        id=f"{turn_id}-a",
        role="assistant",
        text=reply.text,
        created_at=at,
        turn_id=turn_id,
        kind=reply.kind,
        question_id=asked.id if asked else None,
    )
