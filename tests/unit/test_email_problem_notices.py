"""An email that failed or may not have gone out is told twice over, once each: a message in
the job's chat and an ``email_failed`` notification for the inbox and the user's devices
(shared/services/notify/email.py)."""

from __future__ import annotations

from shared.adapters.chat_notices import ChatNotices
from shared.config import Settings
from shared.fakes.clock import FixedClock
from shared.fakes.conversations import FakeConversationStore
from shared.fakes.queues import FakeTaskQueue
from shared.models.agent_data import OutboundEmail, SentMessage
from shared.services.notify.email import NotifiedEmailProblems
from shared.services.notify.events import NotifyTask


def test_a_failed_email_is_told_in_the_chat_and_the_inbox_once() -> None:
    clock, chats, tasks = FixedClock(), FakeConversationStore(), FakeTaskQueue()
    chats.create_chat("u1", "c1", clock.now())
    notices = NotifiedEmailProblems(ChatNotices(chats, clock), tasks, Settings(), clock)
    record = SentMessage(
        id="rec1", idempotency_key="k1", sent_at=clock.now(), provider="smtp", status="failed",
        message=OutboundEmail(to=["carla@example.org"], subject="Meeting", body="at 3pm"),
        relay_reply="550 no such user",
    )  # fmt: skip
    notices.email_failed("u1", "c1", record)
    notices.email_failed("u1", "c1", record)  # a redelivered job tells again
    [told] = [m for m in chats.recent_messages("u1", "c1", 10) if m.id.startswith("email-")]
    assert "was not sent" in told.text and "550 no such user" in told.text
    assert told.kind == "notice"
    [task] = tasks.tasks
    notification = NotifyTask.model_validate_json(task.body).notification
    assert notification.kind == "email_failed" and notification.target.chat_id == "c1"
    assert notification.body == told.text
