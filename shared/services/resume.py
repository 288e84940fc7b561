"""Answer a chat's pending question through ``functions/resume``.

The question lives on the chat document (``Chat.pending``) with where the turn continues;
an answer is one option of it: its id, or words that pick exactly one option (its number,
its label, yes/no, "someone else"). The answer then runs as a turn of the chat whose
``client_message_id`` is derived from the interrupt id, so the turn's claim makes it happen
once: a repeat, a second device or a double click gets 409 ``interrupt_not_pending`` (the
question is gone) or ``turn_in_progress`` (the first answer is still running).

Checkpointed resume with a control record and lease comes with the HITL issue; the wire
contract stays this one.
"""

from __future__ import annotations

from shared.deps import Deps
from shared.errors import BadRequest, InterruptNotPending, MessageTooLong, NotFound
from shared.graph.answers import rule_answer
from shared.models.wire import ResumeRequest, TurnRequest
from shared.services.turn import Answer, PreparedTurn, TurnService


def resume_message_id(interrupt_id: str) -> str:
    return f"resume.{interrupt_id}"[:128]


class ResumeService:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps
        self.turns = TurnService(deps)

    def prepare(
        self, user_id: str, request: ResumeRequest, trace: str | None = None
    ) -> PreparedTurn:
        limit = self._deps.settings.max_message_chars
        if len(request.answer) > limit:
            raise MessageTooLong(f"answer over {limit} characters")
        chat = self._deps.conversations.get_chat(user_id, request.chat_id)
        if chat is None:
            raise NotFound("chat not found")
        pending = chat.pending
        if pending is None or pending.interrupt.id != request.interrupt_id:
            raise InterruptNotPending("no pending interrupt with this id")
        options = pending.interrupt.options
        chosen = next((o for o in options if o.id == request.answer), None)
        if chosen is None:
            picked = rule_answer(request.answer, options)
            chosen = next((o for o in options if o.id == picked), None)
        if chosen is None:
            raise BadRequest("the answer picks none of the interrupt's options")
        turn = TurnRequest(
            chat_id=request.chat_id,
            message=chosen.label,
            client_message_id=resume_message_id(request.interrupt_id),
        )
        prepared = self.turns.prepare(user_id, turn, trace=trace, answer=Answer(chat, chosen.id))
        if prepared.replay is not None:  # answered and finished before
            raise InterruptNotPending("this interrupt was answered already")
        return prepared
