"""A question put to the user on a chat, written once for every asker.

The chat's control record says what waits: the interrupt, what its answer continues
(``target`` and ``thread_id``), when it was asked and, for approvals, when it times out.
The turn graph leaves its own question pending in the turn's commit; background work (a fact
conflict, an agent job) opens one with ``ask_on_chat``, which posts the question as the
assistant's message in the same transaction, and only while no other question waits.
"""

from __future__ import annotations

from datetime import datetime

from shared.models.domain import HitlControl, InterruptTarget, Message
from shared.models.wire import Interrupt
from shared.ports import ConversationStore


def waiting_on(
    interrupt: Interrupt,
    target: InterruptTarget,
    thread_id: str,
    asked_at: datetime,
    timeout_at: datetime | None = None,
    blocking: bool = True,
) -> HitlControl:
    """The chat's control record while ``interrupt`` waits for its answer."""
    return HitlControl(
        status="pending",
        interrupt=interrupt,
        blocking=blocking,
        target=target,
        thread_id=thread_id,
        asked_at=asked_at,
        timeout_at=timeout_at,
    )


def ask_on_chat(
    conversations: ConversationStore,
    user_id: str,
    chat_id: str,
    control: HitlControl,
    message_id: str,
    turn_id: str,
) -> bool:
    """Post the control's question to the chat and make it the pending interrupt, in one
    transaction; False (nothing written) if another question waits. A redelivery that
    opens the same interrupt again writes nothing and answers True."""
    assert control.interrupt is not None and control.asked_at is not None
    now = control.asked_at
    question = Message(
        id=message_id,
        role="assistant",
        text=control.interrupt.question,
        created_at=now,
        turn_id=turn_id,
        kind="question",
        question_id=control.interrupt.id,
    )
    return conversations.open_interrupt(user_id, chat_id, control, question, now)
