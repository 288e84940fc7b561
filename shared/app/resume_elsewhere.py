"""Answers to interrupts that background work opened: no turn graph waits on them.

``pending_item``: a fact conflict the extraction asked about; the answer resolves the held
item (exactly once, ``PendingItems``). ``job``: an agent job waits (approval, clarification,
a watchdog escalation); the answer is handed to the job as a continuation message. Either
way the answer is recorded as a turn of the chat (the user's choice and a short reply) and
the control record is released in the same commit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal
from uuid import UUID

from shared.conversation.phrases import phrase
from shared.deps import Deps
from shared.errors import PendingNotOpen
from shared.graph.persist import turn_messages
from shared.graph.state import ResponseState
from shared.models.domain import ChatUpdate, HitlControl, TurnMetadata
from shared.models.memory_api import ResolvePendingRequest
from shared.models.wire import Reply, TurnResponse
from shared.services.memory.pending import PendingItems

if TYPE_CHECKING:
    from shared.app.turn_input import PreparedTurn


def answer_elsewhere(deps: Deps, turn: PreparedTurn) -> TurnResponse:
    control = turn.resumed
    assert control is not None and control.interrupt is not None and control.thread_id
    language = deps.profiles.get_profile(turn.user_id).language or "en"
    option = turn.answer or ""
    if control.target == "pending_item":
        text = _settle_item(deps, turn.user_id, control.thread_id, option, language)
    else:
        from shared.app.agent_continuation import continue_job

        source: Literal["user", "timeout"] = "timeout" if turn.timed_out else "user"
        continue_job(
            deps,
            turn.user_id,
            turn.chat_id,
            control.thread_id,
            control.interrupt.id,
            option,
            source,
            answer="" if turn.timed_out else turn.request.message,  # a clarification's words
        )
        text = phrase("job_continues", language)
    response = TurnResponse(chat_id=turn.chat_id, turn_id=turn.turn_id, reply=Reply(text=text))
    now = deps.clock.now()
    message_id, asked = f"{turn.turn_id}-u", turn.request.message
    reply = ResponseState(text=text)
    messages = turn_messages(turn.turn_id, message_id, asked, reply, now, turn.timed_out)
    deps.conversations.complete_turn(
        turn.user_id,
        turn.request.client_message_id,
        messages,
        response,
        now,
        metadata=TurnMetadata(interrupt_kind=None, route="resume"),
        chat_update=ChatUpdate(control=HitlControl()),
        finish=True,  # no graph ran: the chat is free again with this commit
    )
    return response


def _settle_item(deps: Deps, user_id: str, item_id: str, choice: str, language: str) -> str:
    request = ResolvePendingRequest.model_validate({"pending_id": UUID(item_id), "choice": choice})
    try:
        PendingItems(deps).resolve(user_id, request)
    except PendingNotOpen:  # answered in the memory settings meanwhile
        return phrase("settled_before", language)
    return phrase("settled", language)
