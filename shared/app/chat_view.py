"""What a client polls: a chat's new messages and the question it waits on; and the
user's chats, for the client's list.

Agent jobs post their progress and results, and background work (a fact conflict, a job's
approval) opens questions, while no request of the user is running; the client sees them
here, and answers a question through resume. Another user's chat is simply not found.
"""

from __future__ import annotations

from shared.deps import Deps
from shared.errors import NotFound
from shared.models.domain import Chat
from shared.models.wire import (
    ChatListRequest,
    ChatListResponse,
    ChatMessage,
    ChatMessagesRequest,
    ChatMessagesResponse,
    ChatSummary,
)


def chat_messages(deps: Deps, user_id: str, request: ChatMessagesRequest) -> ChatMessagesResponse:
    chat = deps.conversations.get_chat(user_id, request.chat_id)
    if chat is None:
        raise NotFound("chat not found")
    found = deps.conversations.recent_messages(
        user_id, request.chat_id, request.limit, after=request.after
    )
    return ChatMessagesResponse(
        chat_id=request.chat_id,
        messages=[
            ChatMessage(id=m.id, role=m.role, text=m.text, created_at=m.created_at) for m in found
        ],
        interrupt=chat.control.interrupt if _waits(deps, chat) else None,
    )


def chat_list(deps: Deps, user_id: str, request: ChatListRequest) -> ChatListResponse:
    chats = deps.conversations.list_chats(user_id, request.limit)
    return ChatListResponse(
        chats=[
            ChatSummary(
                id=chat.id,
                created_at=chat.created_at,
                updated_at=chat.updated_at,
                message_count=chat.message_count,
                waiting=_waits(deps, chat),
            )
            for chat in chats
        ]
    )


def _waits(deps: Deps, chat: Chat) -> bool:
    """A question the user can answer now (a "by the way" question does not block)."""
    return chat.control.waiting(deps.clock.now()) and chat.control.blocking
