"""``EmailNotices`` as a message in the chat the job reports to (what jobs do for their
outcomes). The message id derives from the outbox record, so telling twice (a redelivered
job) posts once; a chat deleted meanwhile gets nothing."""

from __future__ import annotations

import logging

from shared.errors import NotFound
from shared.models.agent_data import SentMessage
from shared.models.domain import Message
from shared.ports import Clock, ConversationStore

log = logging.getLogger("agents")


def email_problem_text(record: SentMessage) -> str:
    """Plain words for a person: what happened, what the relay said, what to do."""
    to = ", ".join(record.message.to)
    subject = record.message.subject
    said = f" The mail server said: {record.relay_reply}" if record.relay_reply else ""
    if record.status == "failed":
        return (
            f"Your email “{subject}” to {to} was not sent.{said} "
            "Nothing went out; ask me again to retry."
        )
    return (
        f"I cannot tell whether your email “{subject}” to {to} went out: the mail server "
        f"stopped answering after receiving it.{said} I will not send it again by myself; "
        "check with the recipient before asking me to resend."
    )


class ChatNotices:
    def __init__(self, conversations: ConversationStore, clock: Clock) -> None:
        self._conversations, self._clock = conversations, clock

    def email_failed(self, user_id: str, chat_id: str, record: SentMessage) -> None:
        message = Message(
            id=f"email-{record.id[:32]}",
            role="assistant",
            text=email_problem_text(record),
            created_at=self._clock.now(),
        )
        try:
            self._conversations.append_message(user_id, chat_id, message)
        except NotFound:
            log.warning("email notice: the chat is gone", extra={"record": record.id})
