"""A question on the chat, as background work and the turn graph put it (one writer)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared.fakes.conversations import FakeConversationStore
from shared.models.wire import Interrupt, InterruptOption
from shared.services.questions import ask_on_chat, waiting_on

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def interrupt(interrupt_id: str) -> Interrupt:
    return Interrupt(
        id=interrupt_id,
        kind="approval",
        question=f"May I go on with {interrupt_id}?",
        options=[InterruptOption(id="approve", label="Yes")],
    )


def test_a_question_waits_on_the_chat_with_its_message() -> None:
    chats = FakeConversationStore()
    chats.create_chat("alice", "c1", NOW)
    timeout = NOW + timedelta(minutes=5)
    control = waiting_on(interrupt("job-q1"), "job", "job-1", NOW, timeout)
    assert ask_on_chat(chats, "alice", "c1", control, "job-q1", "t1")
    chat = chats.get_chat("alice", "c1")
    assert chat is not None and chat.control.waiting(NOW)
    waiting = chat.control
    assert (waiting.target, waiting.thread_id, waiting.asked_at) == ("job", "job-1", NOW)
    assert (waiting.timeout_at, waiting.blocking) == (timeout, True)
    [message] = chats.recent_messages("alice", "c1", limit=10)
    assert (message.id, message.role, message.turn_id) == ("job-q1", "assistant", "t1")
    assert message.text == "May I go on with job-q1?"
    assert (message.kind, message.question_id) == ("question", "job-q1")


def test_one_question_at_a_time_and_a_redelivery_writes_nothing() -> None:
    chats = FakeConversationStore()
    chats.create_chat("alice", "c1", NOW)
    first = waiting_on(interrupt("conflict-1"), "pending_item", "item-1", NOW)
    assert ask_on_chat(chats, "alice", "c1", first, "conflict-1-q", "t1")
    assert ask_on_chat(chats, "alice", "c1", first, "conflict-1-q", "t1")  # redelivered
    second = waiting_on(interrupt("job-q1"), "job", "job-1", NOW + timedelta(seconds=1))
    assert not ask_on_chat(chats, "alice", "c1", second, "job-q1", "t2")
    chat = chats.get_chat("alice", "c1")
    assert chat is not None and chat.control == first
    assert [m.id for m in chats.recent_messages("alice", "c1", limit=10)] == ["conflict-1-q"]
