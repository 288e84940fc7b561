"""The turn record's outbox (ConversationStore), the fake and Firestore alike: handoffs kept
with the turn's completion, listed on the chat, found by the scheduled drain, settled."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from shared.models.domain import Handoff
from shared.ports import ConversationStore, OutboxEntry
from tests.contract.test_conversations import at, message, response

LEASE = 120


@pytest.fixture(autouse=True)
def settled_afterwards(conversations: ConversationStore, user_id: str) -> Iterator[None]:
    """The emulator is shared: leave no outbox for a drain elsewhere to find."""
    yield
    for entry in mine(conversations, user_id):
        conversations.settle_outbox(user_id, entry.chat_id, entry.client_message_id, [])


def handoff(name: str, kind: str = "task") -> Handoff:
    return Handoff.model_validate(
        {"kind": kind, "name": name, "queue": "q", "url": "http://x/", "body": '{"a": 1}',
         "attributes": {"h": "v"}, "schedule_time": at(60) if kind == "task" else None}
    )  # fmt: skip


def complete(store: ConversationStore, user_id: str, cmid: str, kept: list[Handoff]) -> None:
    store.claim_turn(user_id, cmid, "c1", f"t-{cmid}", at(0), LEASE)
    messages = [message(f"{cmid}-u", 1, "user", f"t-{cmid}")]
    store.complete_turn(
        user_id, cmid, messages, response("c1", f"t-{cmid}"), at(1), new_chat=True, outbox=kept
    )


def mine(store: ConversationStore, user_id: str) -> list[OutboxEntry]:
    return [e for e in store.turns_with_outbox(1000) if e.user_id == user_id]


def test_kept_handoffs_are_on_the_turn_and_its_chat(
    conversations: ConversationStore, user_id: str
) -> None:
    kept = [handoff("extract-t1"), handoff("job-1", "message")]
    complete(conversations, user_id, "cm1", kept)
    assert conversations.outbox(user_id, "cm1") == kept
    chat = conversations.get_chat(user_id, "c1")
    assert chat is not None and chat.outbox == ["cm1"]
    assert mine(conversations, user_id) == [OutboxEntry(user_id, "c1", "cm1")]


def test_a_turn_with_nothing_kept_has_no_outbox(
    conversations: ConversationStore, user_id: str
) -> None:
    complete(conversations, user_id, "cm1", [])
    chat = conversations.get_chat(user_id, "c1")
    assert chat is not None and chat.outbox == []
    assert conversations.outbox(user_id, "cm1") == []
    assert conversations.outbox(user_id, "unknown") == []
    assert mine(conversations, user_id) == []


def test_settling_keeps_what_is_left_then_clears_the_turn_from_its_chat(
    conversations: ConversationStore, user_id: str
) -> None:
    first, second = handoff("extract-t1"), handoff("job-1", "message")
    complete(conversations, user_id, "cm1", [first, second])
    complete(conversations, user_id, "cm2", [handoff("extract-t2")])
    conversations.settle_outbox(user_id, "c1", "cm1", [second])
    assert conversations.outbox(user_id, "cm1") == [second]
    chat = conversations.get_chat(user_id, "c1")
    assert chat is not None and sorted(chat.outbox) == ["cm1", "cm2"]
    conversations.settle_outbox(user_id, "c1", "cm1", [])
    assert conversations.outbox(user_id, "cm1") == []
    chat = conversations.get_chat(user_id, "c1")
    assert chat is not None and chat.outbox == ["cm2"]
    assert mine(conversations, user_id) == [OutboxEntry(user_id, "c1", "cm2")]


def test_settling_a_gone_turn_is_harmless(conversations: ConversationStore, user_id: str) -> None:
    conversations.settle_outbox(user_id, "c1", "never", [])
    assert conversations.get_chat(user_id, "c1") is None
