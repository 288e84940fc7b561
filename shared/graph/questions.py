"""A question the turn leaves pending: the interrupt, and where the turn continues."""

from __future__ import annotations

from typing import Any

from shared.graph.context import TurnContext
from shared.graph.state import Hitl, ResumePoint, TurnState
from shared.models.domain import PendingQuestion
from shared.models.wire import Interrupt


def ask(
    state: TurnState,
    context: TurnContext,
    interrupt: Interrupt,
    blocking: bool = True,
    **resume: Any,
) -> Hitl:
    """``resume``: what the answer needs besides the asked message and its intent."""
    conversation = state.conversation
    assert state.intent is not None, "a question is asked after classification"
    point = ResumePoint(
        focus=conversation.focus,
        focus_message_id=conversation.focus_message_id,
        focus_turn_id=conversation.focus_turn_id,
        intent=state.intent,
        **resume,
    )
    question = PendingQuestion(
        interrupt=interrupt,
        blocking=blocking,
        turn_id=context.turn_id,
        asked_at=context.ports.clock.now(),
        resume_at=point.model_dump(mode="json"),
    )
    return Hitl(ask=question)
