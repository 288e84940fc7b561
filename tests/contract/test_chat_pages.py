"""ConversationStore contract, the /v1 half: chats and messages listed by keyset pages, and
chat titles (set at creation, by a turn's update, or conditionally by the user)."""

from __future__ import annotations

import pytest

from shared.errors import PreconditionFailed
from shared.models.domain import Chat, ChatUpdate
from shared.ports import ConversationStore, MessagePage
from tests.contract.conftest import unique
from tests.contract.test_conversations import at, message, run_turn


def test_chats_page_by_position_with_ties_in_time(
    conversations: ConversationStore, user_id: str
) -> None:
    for chat_id in ("a", "b", "c", "d"):  # same time: the id breaks the tie
        conversations.create_chat(user_id, chat_id, at(0))
    conversations.create_chat(user_id, "newest", at(5))
    first = conversations.list_chats(user_id, 2)
    assert [c.id for c in first] == ["newest", "d"]
    last = first[-1]
    rest = conversations.list_chats(user_id, 10, after=(last.updated_at, last.id))
    assert [c.id for c in rest] == ["c", "b", "a"]
    assert conversations.list_chats(unique("user"), 10, after=(last.updated_at, last.id)) == []


def test_messages_page_either_way_and_since_a_time(
    conversations: ConversationStore, user_id: str
) -> None:
    conversations.create_chat(user_id, "c1", at(0))
    for index, seconds in enumerate((1, 2, 2, 3, 4)):
        assert conversations.append_message(user_id, "c1", message(f"m{index}", seconds))
    oldest = conversations.list_messages(user_id, "c1", MessagePage(limit=2))
    assert [m.id for m in oldest] == ["m0", "m1"]
    position = (oldest[-1].created_at, oldest[-1].id)
    onward = conversations.list_messages(user_id, "c1", MessagePage(limit=10, after=position))
    assert [m.id for m in onward] == ["m2", "m3", "m4"]
    newest = MessagePage(limit=3, newest_first=True)
    assert [m.id for m in conversations.list_messages(user_id, "c1", newest)] == ["m4", "m3", "m2"]
    since = MessagePage(limit=10, since=at(2))
    assert [m.id for m in conversations.list_messages(user_id, "c1", since)] == ["m3", "m4"]
    assert conversations.list_messages(unique("user"), "c1", MessagePage(limit=10)) == []


def test_a_title_is_kept_from_creation_and_changed_only_if_the_check_passes(
    conversations: ConversationStore, user_id: str
) -> None:
    assert conversations.create_chat(user_id, "c1", at(0), title="Trip").title == "Trip"
    renamed = conversations.retitle(user_id, "c1", "Rome trip", lambda chat: None)
    assert renamed is not None and renamed.title == "Rome trip"

    def refuse(chat: Chat) -> None:
        assert chat.title == "Rome trip"  # the check sees the chat as stored
        raise PreconditionFailed("stale")

    with pytest.raises(PreconditionFailed):
        conversations.retitle(user_id, "c1", "Lost update", refuse)
    stored = conversations.get_chat(user_id, "c1")
    assert stored is not None and stored.title == "Rome trip"
    assert conversations.retitle(unique("user"), "c1", "x", lambda chat: None) is None
    assert conversations.get_chat(user_id, "missing") is None


def test_a_turn_names_its_chat_through_the_chat_update(
    conversations: ConversationStore, user_id: str
) -> None:
    conversations.create_chat(user_id, "c1", at(0))
    run_turn(conversations, user_id, "t1", 1, chat_update=ChatUpdate(title="Plan a trip"))
    stored = conversations.get_chat(user_id, "c1")
    assert stored is not None and (stored.title, stored.message_count) == ("Plan a trip", 2)
