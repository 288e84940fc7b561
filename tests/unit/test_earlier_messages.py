"""The user's previous messages the tier reads "she" from: theirs only, oldest first, the
last three, never this turn's own message."""

from __future__ import annotations

from datetime import UTC, datetime

from shared.graph.state import Conversation, TurnState
from shared.graph.understood import EARLIER_MESSAGES, earlier_messages
from shared.models.domain import Message

AT = datetime(2026, 11, 28, 10, tzinfo=UTC)


def message(n: int, role: str = "user") -> Message:
    return Message.model_validate(
        {"id": f"m{n}", "role": role, "text": f"{role} {n}", "created_at": AT}
    )


def test_only_the_users_previous_messages_are_read() -> None:
    history = [message(1), message(2, "assistant"), message(3), message(4), message(5)]
    history += [message(6, "assistant"), message(7)]  # m7: this turn's, if stored already
    state = TurnState(
        conversation=Conversation(user_message="user 7", message_id="m7", history=history)
    )
    assert earlier_messages(state) == ("user 3", "user 4", "user 5")
    assert len(earlier_messages(state)) == EARLIER_MESSAGES


def test_a_first_message_has_nothing_earlier() -> None:
    assert earlier_messages(TurnState()) == ()
