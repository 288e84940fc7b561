"""Resume a human-in-the-loop interrupt of a chat."""

from __future__ import annotations

from shared.deps import Deps
from shared.errors import InterruptNotPending, MessageTooLong, NotFound
from shared.models.wire import ResumeRequest, TurnResponse


class ResumeService:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    def run(self, user_id: str, request: ResumeRequest) -> TurnResponse:
        if len(request.answer) > self._deps.settings.max_message_chars:
            raise MessageTooLong("answer too long")
        if self._deps.conversations.get_chat(user_id, request.chat_id) is None:
            raise NotFound("chat not found")
        # The turn graph of this release never pauses, so no interrupt can be pending; the
        # checkpointed resume path arrives with the human-in-the-loop work (issue 5).
        raise InterruptNotPending("no pending interrupt with this id")
