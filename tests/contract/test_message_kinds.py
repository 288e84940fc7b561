"""What a stored message is (``kind``, and a question's ``question_id``) survives every way a
message is written and read, on the fake and on Firestore; documents written before kinds
were kept read as plain text."""

from __future__ import annotations

import pytest
from google.cloud import firestore
from pydantic import ValidationError

from shared.adapters.firestore_conversations import FirestoreConversationStore
from shared.models.domain import Message
from shared.models.wire import MessageKind
from shared.ports import ConversationStore, MessagePage
from tests.contract.conftest import unique
from tests.contract.test_conversations import at, pending, response


def said(
    message_id: str,
    seconds: float,
    kind: MessageKind = "text",
    question_id: str | None = None,
    role: str = "assistant",
) -> Message:
    return Message.model_validate(
        {
            "id": message_id,
            "role": role,
            "text": "Here is the plan:\n1. Book\n2. Pack",  # a list, whatever the kind
            "created_at": at(seconds),
            "kind": kind,
            "question_id": question_id,
        }
    )


def kinds(store: ConversationStore, user_id: str) -> list[tuple[str, str, str | None]]:
    listed = store.list_messages(user_id, "c1", MessagePage(limit=50))
    recent = store.recent_messages(user_id, "c1", 50)
    assert listed == recent  # both reads decode the same
    return [(m.id, m.kind, m.question_id) for m in listed]


def test_each_write_keeps_what_its_messages_are(
    conversations: ConversationStore, user_id: str
) -> None:
    conversations.claim_turn(user_id, "cm-t1", "c1", "t1", at(0), 120)
    asked = said("t1-a", 0.000001, "question", "i-t1")
    turn = [said("t1-u", 0, role="user"), asked]
    conversations.complete_turn(user_id, "cm-t1", turn, response("c1", "t1"), at(0), new_chat=True)
    for message in (
        said("job-s1", 1, "progress"),
        said("job-result", 2, "result"),
        said("job-stalled", 3, "notice"),
        said("t2-a", 4, "fallback"),
        said("t3-a", 5, "interrupted"),
    ):
        assert conversations.append_message(user_id, "c1", message)
    question = said("conflict-x-q", 6, "question", "conflict-x")
    assert conversations.open_interrupt(user_id, "c1", pending("t9", 6), question, at(6))

    assert kinds(conversations, user_id) == [
        ("t1-u", "text", None),
        ("t1-a", "question", "i-t1"),
        ("job-s1", "progress", None),
        ("job-result", "result", None),
        ("job-stalled", "notice", None),
        ("t2-a", "fallback", None),
        ("t3-a", "interrupted", None),
        ("conflict-x-q", "question", "conflict-x"),
    ]
    assert conversations.recent_messages(user_id, "c1", 1) == [question]


def test_a_question_names_its_interrupt_and_nothing_else_does() -> None:
    with pytest.raises(ValidationError):
        said("m", 0, "question")
    with pytest.raises(ValidationError):
        said("m", 0, "text", "i-1")
    with pytest.raises(ValidationError):
        said("m", 0, "answer")  # type: ignore[arg-type]  # not a kind


@pytest.mark.stack
def test_a_document_from_before_kinds_reads_as_text(
    stack_env: None, firestore_client: firestore.Client
) -> None:
    user_id = unique("user")
    store = FirestoreConversationStore(firestore_client)
    store.create_chat(user_id, "c1", at(0))
    chat = firestore_client.document(f"users/{user_id}/chats/c1")
    chat.collection("messages").document("old-a").set(
        {"role": "assistant", "text": "Shall I?\n1. Yes\n2. No", "created_at": at(1)}
    )
    assert kinds(store, user_id) == [("old-a", "text", None)]
