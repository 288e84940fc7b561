"""Stage 2, the HITL handler: a new message while the chat waits on a question.

The message either answers the question (rules first, then one short model call for a short
reply that is not itself a question) or escapes it with a new request. An escape cancels
the question (a deferred extraction then runs without the answer: the fact system holds
what it cannot attribute, it never guesses). A plain greeting neither answers nor cancels.
Answers continue where the question was asked: ``resolve_disambiguation`` here, approvals
at agent execution. An answer sent to ``functions/resume`` instead continues from the
turn's checkpoint; both paths share the resume point stored on the chat.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from shared.conversation.answers import (
    EDIT,
    SOMEONE_ELSE,
    bare_yes,
    may_be_answer,
    rule_answer,
)
from shared.conversation.greetings import is_plain_greeting
from shared.graph import choices
from shared.graph.context import TurnContext
from shared.graph.instrument import node
from shared.graph.routing import after_hitl_handler
from shared.graph.state import (
    Conversation,
    Hitl,
    MemoryState,
    Resolved,
    ResumePoint,
    TurnState,
)
from shared.models.base import NO_TRIM
from shared.models.domain import ExtractionTask, ResolvedEntity
from shared.models.wire import Interrupt
from shared.ports import ChatTurn, LLMRequest
from shared.services.memory.pending import PendingItems
from shared.services.structured import structured_with_retry


class AnswerMatch(BaseModel):
    answers_question: bool
    option_id: str | None = Field(default=None, max_length=80, json_schema_extra={NO_TRIM: True})


@node("hitl_handler")
def hitl_handler(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    pending, message = state.hitl.pending, state.conversation.user_message
    if pending is None or state.hitl.outcome == "answered":  # none, or answered via resume
        return {}
    if is_plain_greeting(message):
        return {"hitl": Hitl(outcome="kept")}
    option = rule_answer(message, pending.interrupt.options, pending.interrupt.question)
    if option is None and bare_yes(message) and _values(pending.interrupt) > 1:
        # "yes" to "at what time?" picks neither 11:00 nor 23:00: the question is asked
        # again, never guessed, and nothing else is done with the word
        return {"hitl": Hitl(outcome="kept", ask=pending)}
    if option is None and may_be_answer(message) and _trusted(runtime.context):
        option = _ask_model(runtime.context, pending.interrupt, message)
    if option is None:
        return _escape(state)
    return {"hitl": Hitl(outcome="answered", option_id=option)}


def _values(interrupt: Interrupt) -> int:
    """How many values the question offers to pick from (an approval's ``choose:``)."""
    return sum(1 for option in interrupt.options if choices.picked(option.id) is not None)


def _trusted(context: TurnContext) -> bool:
    """A weak model (``MODEL_STRENGTH=weak``, the offline one) is not asked whether a reply
    answers: an unclear reply escapes the question, which keeps what it held for the user,
    rather than risk facts on the wrong person."""
    return context.ports.settings.model_strength == "strong"


def _ask_model(context: TurnContext, interrupt: Interrupt, message: str) -> str | None:
    options = "\n".join(f"- {o.id}: {o.label}" for o in interrupt.options)
    request = LLMRequest(
        kind="routing",
        system="The assistant asked the user a question. Decide whether the user's reply "
        "answers it and, if so, which option id it picks (null if none fits).",
        messages=[
            ChatTurn(role="assistant", text=f"{interrupt.question}\n{options}"),
            ChatTurn(role="user", text=message),
        ],
        max_output_tokens=64,
        temperature=0.0,
    )
    match, _ = structured_with_retry(context.llm, request, AnswerMatch)
    known = {o.id for o in interrupt.options} - {EDIT}
    return match.option_id if match.answers_question and match.option_id in known else None


def _escape(state: TurnState) -> dict[str, Any]:
    assert state.hitl.pending is not None
    point = ResumePoint.model_validate(state.hitl.pending.resume_at)
    # Never lose what the user told us: the deferred extraction runs without the answer
    # (a "by the way" question deferred nothing: its turn's extraction was enqueued).
    released = point.extraction if state.hitl.pending.blocking else None
    return {"hitl": Hitl(outcome="escaped", released=released)}


@node("resolve_disambiguation")
def resolve_disambiguation(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    """Continue the asked turn: its message and intent, with the person now known."""
    assert state.hitl.pending is not None and state.hitl.option_id is not None
    pending = state.hitl.pending
    point = ResumePoint.model_validate(pending.resume_at)
    mention = point.mention or ""
    chosen = _chosen(mention, state.hitl.option_id, pending.interrupt)
    entity = _as_entity(chosen)
    if not pending.blocking:  # answered already: settle what the fact system held
        context = runtime.context
        PendingItems(context.ports).settle_mention(context.user_id, context.chat_id, entity)
        # Its extraction may not have run yet: the answer goes with it (``settles``).
        return {"memory": MemoryState(resolved=[chosen], extraction=_answered(point, entity))}
    resolved = [*point.resolved, chosen]
    update: dict[str, Any] = {
        "conversation": Conversation(
            focus=point.focus,
            focus_message_id=point.focus_message_id,
            focus_turn_id=point.focus_turn_id,
        ),
        "intent": point.intent,
        "memory": MemoryState(resolved=resolved),
    }
    if point.extraction is not None:
        entities = [_as_entity(r) for r in resolved if r.person_id or r.new_person]
        task = point.extraction.model_copy(update={"resolved_entities": entities})
        update["memory"] = MemoryState(resolved=resolved, extraction=task)
    return update


def _chosen(mention: str, option_id: str, interrupt: Interrupt) -> Resolved:
    if option_id == SOMEONE_ELSE:
        return Resolved(mention=mention, new_person=True, display_name=mention)
    label = next((o.label for o in interrupt.options if o.id == option_id), mention)
    return Resolved(mention=mention, person_id=option_id, display_name=label.split(" (")[0])


def _answered(point: ResumePoint, chosen: ResolvedEntity) -> ExtractionTask | None:
    if point.extraction is None:
        return None
    entities = [*point.extraction.resolved_entities, chosen]
    return point.extraction.model_copy(
        update={"resolved_entities": entities, "settles": chosen.mention, "summary": None}
    )


def _as_entity(resolved: Resolved) -> ResolvedEntity:
    return ResolvedEntity(
        mention=resolved.mention,
        person_id=resolved.person_id,
        confidence=resolved.confidence,
        new_person=resolved.new_person,
    )


def build(checkpointer: bool | None = False) -> Any:
    """``checkpointer=False``: the turn's thread is checkpointed by the parent graph only."""
    graph = StateGraph(TurnState, context_schema=TurnContext)
    graph.add_node("hitl_handler", hitl_handler)
    graph.add_node("resolve_disambiguation", resolve_disambiguation)
    graph.add_edge(START, "hitl_handler")
    graph.add_conditional_edges(
        "hitl_handler", after_hitl_handler, ["resolve_disambiguation", "__end__"]
    )
    graph.add_edge("resolve_disambiguation", "__end__")
    return graph.compile(name="hitl", checkpointer=checkpointer)
