"""What a finished turn writes: its two messages, its record (response + metadata), the
chat's update, the background work. One Firestore commit; the queued work first, so a
failure before the commit leaves the claim to be retried and re-sends the same names.

A failed turn (a node raised) writes the user's message and the fallback reply, records the
failure in the metadata, keeps the chat's pending question, and hands off nothing.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta

from shared.errors import NodeFailed
from shared.graph.context import TurnContext
from shared.graph.metering import cost_usd
from shared.graph.state import TurnState
from shared.models.domain import AgentJob, ChatUpdate, ExtractionTask, Message, TurnMetadata
from shared.models.wire import Reply, TurnResponse
from shared.services import handoff
from shared.services.ids import job_id_for


def record_turn(
    context: TurnContext, state: TurnState, failure: NodeFailed | None = None
) -> TurnResponse:
    ports = context.ports
    settings, now = ports.settings, ports.clock.now()
    response = wire_response(context, state)
    extractions = [] if failure else extraction_tasks(state)
    jobs = [] if failure else agent_jobs(context, state)
    handoff.enqueue_extractions(settings, ports.tasks, extractions, context.trace)
    handoff.publish_jobs(settings, ports.publisher, jobs, context.trace)
    metadata = turn_metadata(context, state, failure)
    metadata = metadata.model_copy(
        update={"extraction_enqueued": bool(extractions), "jobs_published": len(jobs)}
    )
    ports.conversations.complete_turn(
        context.user_id,
        context.client_message_id,
        _messages(context, state, now),
        response,
        now,
        new_chat=context.chat_is_new,
        metadata=metadata,
        chat_update=None if failure else chat_update(state),
    )
    return response


def wire_response(context: TurnContext, state: TurnState) -> TurnResponse:
    ask = state.hitl.ask
    interrupt = ask.interrupt if ask is not None and ask.blocking else None
    return TurnResponse(
        chat_id=context.chat_id,
        turn_id=context.turn_id,
        reply=Reply(text=state.response.text, kind=state.response.kind),
        interrupt=interrupt,
    )


def extraction_tasks(state: TurnState) -> list[ExtractionTask]:
    memory, tasks = state.memory, []
    if memory.extraction is not None and not memory.extraction_deferred:
        tasks.append(memory.extraction)
    if state.hitl.released is not None:
        tasks.append(state.hitl.released)
    return tasks


def agent_jobs(context: TurnContext, state: TurnState) -> list[AgentJob]:
    published = {r.step_id for r in state.planning.results if r.status == "published"}
    now = context.ports.clock.now()
    plan_turn = state.conversation.focus_turn_id or context.turn_id  # stable across answers
    return [
        AgentJob(
            job_id=job_id_for(plan_turn, index),
            user_id=context.user_id,
            chat_id=context.chat_id,
            turn_id=context.turn_id,
            agent=step.agent,
            goal=step.inputs.get("goal", state.conversation.focus),
            created_at=now,
        )
        for index, step in enumerate(state.planning.steps)
        if step.id in published
    ]


def chat_update(state: TurnState) -> ChatUpdate | None:
    hitl, summary = state.hitl, state.conversation.new_summary
    settled = hitl.outcome in ("answered", "escaped")
    if summary is None and hitl.ask is None and not settled:
        return None
    return ChatUpdate(
        summary=summary.text if summary else None,
        summarized_until=summary.until if summary else None,
        pending=hitl.ask,
        clear_pending=settled and hitl.ask is None,
    )


def turn_metadata(
    context: TurnContext, state: TurnState, failure: NodeFailed | None
) -> TurnMetadata:
    settings, intent, tally = context.ports.settings, state.intent, context.meter.turn
    return TurnMetadata(
        outcome="failed" if failure else "ok",
        error_code=failure.cause.code if failure else None,
        failed_node=failure.node if failure else None,
        route=intent.route if intent else None,
        fast_path=intent.fast_path if intent else False,
        flags=intent.model_dump(include=_FLAGS) if intent else {},
        nodes=state.trace,
        input_tokens=tally.input_tokens,
        output_tokens=tally.output_tokens,
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
    )


_FLAGS = {
    "has_extractable_facts",
    "has_preferences",
    "needs_semantic_retrieval",
    "needs_temporal_retrieval",
}


def _messages(context: TurnContext, state: TurnState, now: datetime) -> list[Message]:
    return [
        Message(
            id=state.conversation.message_id,
            role="user",
            text=state.conversation.user_message,
            created_at=now,
            turn_id=context.turn_id,
        ),
        Message(
            id=f"{context.turn_id}-a",
            role="assistant",
            text=state.response.text,
            created_at=now + timedelta(microseconds=1),
            turn_id=context.turn_id,
        ),
    ]
