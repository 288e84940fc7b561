"""``EmailNotices`` as a message in the chat the job reports to (what jobs do for their
outcomes). The message id derives from the outbox record, so telling twice (a redelivered
job) posts once; a chat deleted meanwhile gets nothing."""

from __future__ import annotations

import logging

from shared.conversation.email_problems import email_problem_text
from shared.errors import NotFound
from shared.models.agent_data import SentMessage
from shared.models.domain import Message
from shared.ports import Clock, ConversationStore

log = logging.getLogger("agents")


class ChatNotices:
    def __init__(self, conversations: ConversationStore, clock: Clock) -> None:
        self._conversations, self._clock = conversations, clock

    def email_failed(self, user_id: str, chat_id: str, record: SentMessage) -> None:
        message = Message(
            id=f"email-{record.id[:32]}",
            role="assistant",
            text=email_problem_text(record),
            created_at=self._clock.now(),
            kind="notice",
        )
        try:
            self._conversations.append_message(user_id, chat_id, message)
        except NotFound:
            log.warning("email notice: the chat is gone", extra={"record": record.id})
