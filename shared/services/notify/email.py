"""``EmailNotices`` that tells the user both ways: a message in the job's chat, and an
``email_failed`` notification (the inbox, then the user's devices). Both are idempotent per
outbox record: the chat message's id and the notification's task name derive from it."""

from __future__ import annotations

from shared.config import Settings
from shared.conversation.email_problems import email_problem_text
from shared.models.agent_data import SentMessage
from shared.ports import Clock, EmailNotices, TaskQueue
from shared.services.notify.events import email_task, enqueue_quietly


class NotifiedEmailProblems:
    def __init__(
        self, chat: EmailNotices, tasks: TaskQueue, settings: Settings, clock: Clock
    ) -> None:
        self._chat, self._tasks, self._settings, self._clock = chat, tasks, settings, clock

    def email_failed(self, user_id: str, chat_id: str, record: SentMessage) -> None:
        self._chat.email_failed(user_id, chat_id, record)
        words = email_problem_text(record)
        task = email_task(self._settings, user_id, chat_id, record.id, words, self._clock.now())
        enqueue_quietly(self._tasks, [task])
