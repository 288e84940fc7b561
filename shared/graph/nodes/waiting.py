"""The thread waits for the user: ``await_answer`` pauses the graph on the question asked.

``interrupt()`` is the first thing the node does, and it has no side effect: LangGraph
re-runs the node from its start on resume, so nothing here can happen twice. The turn that
asked has already stored its reply (``message_persist`` ran before); the checkpoint saved
at exit (``durability="exit"``) holds the question and where to continue.

Resumed, the node starts the next turn on the same thread: every namespace is reset to the
new turn's values (the reducers merge, so each field is set explicitly), the question
becomes ``hitl.pending``, and the run goes on through entry and the HITL handler as any turn
does: an answer continues where the question was asked, anything else escapes it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, TypeVar

from langgraph.runtime import Runtime
from langgraph.types import interrupt
from pydantic import BaseModel

from shared.graph.context import TurnContext
from shared.graph.instrument import node
from shared.graph.persist import reply_message
from shared.graph.state import (
    TRACE_RESET,
    Disambiguation,
    Hitl,
    Intent,
    MemoryState,
    Planning,
    ResponseState,
    TurnInput,
    TurnState,
)
from shared.models.domain import Message, NodeRun

M = TypeVar("M", bound=BaseModel)


@node("await_answer")
def await_answer(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    question = state.hitl.ask or state.hitl.pending  # a kept question waits again
    assert question is not None, "await_answer runs only when a question waits"
    answer = TurnInput.model_validate(interrupt(question.interrupt.model_dump(mode="json")))
    hitl = Hitl(
        pending=question,
        outcome="none" if answer.option_id is None else "answered",
        option_id=answer.option_id,
        timed_out=answer.timed_out,
    )
    conversation = answer.conversation
    if answer.chat_unchanged:
        conversation = conversation.model_copy(
            update={"history": _history_after(state, question.asked_at), "history_loaded": True}
        )
    return {
        "conversation": explicit(conversation),
        "intent": explicit(Intent()),
        "memory": explicit(MemoryState()),
        "disambiguation": explicit(Disambiguation()),
        "planning": explicit(Planning()),
        "hitl": explicit(hitl),
        "response": explicit(ResponseState()),
        "trace": [NodeRun(node=TRACE_RESET, ms=0.0)],
    }


def _history_after(state: TurnState, asked_at: datetime) -> list[Message]:
    """The asking turn's history and its two messages: the chat as it stands, when nothing
    was added since (the claim compared the chat's message count)."""
    asked = state.conversation
    turn_id = asked.message_id.removesuffix("-u")
    return [
        *asked.history,
        Message(
            id=asked.message_id,
            role="user",
            text=asked.user_message,
            created_at=asked_at,
            turn_id=turn_id,
        ),
        reply_message(turn_id, state.response, asked_at + timedelta(microseconds=1)),
    ]


def explicit(model: M) -> M:
    """The same values, every field marked as set, so ``merge`` replaces them all."""
    return model.model_copy(
        update={name: getattr(model, name) for name in type(model).model_fields}
    )
