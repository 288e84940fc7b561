"""What a client polls: a chat's new messages and the question it waits on.

Agent jobs post their progress and results, and background work (a fact conflict, a job's
approval) opens questions, while no request of the user is running; the client sees them
here, and answers a question through resume. Another user's chat is simply not found.
"""

from __future__ import annotations

from shared.deps import Deps
from shared.errors import NotFound
from shared.models.wire import ChatMessage, ChatMessagesRequest, ChatMessagesResponse


def chat_messages(deps: Deps, user_id: str, request: ChatMessagesRequest) -> ChatMessagesResponse:
    chat = deps.conversations.get_chat(user_id, request.chat_id)
    if chat is None:
        raise NotFound("chat not found")
    found = deps.conversations.recent_messages(
        user_id, request.chat_id, request.limit, after=request.after
    )
    control = chat.control
    waiting = control.waiting(deps.clock.now()) and control.blocking
    return ChatMessagesResponse(
        chat_id=request.chat_id,
        messages=[
            ChatMessage(id=m.id, role=m.role, text=m.text, created_at=m.created_at) for m in found
        ],
        interrupt=control.interrupt if waiting else None,
    )
