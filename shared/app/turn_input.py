"""How a prepared turn enters the graph: a new thread from its first state, or the asking
thread resumed with the answer (``Command(resume=...)`` on the thread's latest checkpoint).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from shared.conversation.greetings import is_plain_greeting
from shared.graph.state import Conversation, TurnInput, TurnState
from shared.models.domain import Chat, HitlControl
from shared.models.wire import TurnRequest, TurnResponse


@dataclass(frozen=True)
class PreparedTurn:
    user_id: str
    chat_id: str
    turn_id: str
    request: TurnRequest
    chat_is_new: bool
    chat: Chat | None = None
    replay: TurnResponse | None = None
    trace: str | None = None
    resumed: HitlControl | None = None  # the waiting interrupt this turn claimed
    answer: str | None = None  # the option chosen via resume (None: the message decides)
    timed_out: bool = False  # the approval timeout answers, not the user
    owner: str = ""  # the request that claimed the turn (and holds its chat)
    title: str | None = None  # the title this turn gives its untitled chat

    @property
    def first_turn(self) -> bool:
        """Nothing was said in the chat yet: there is no history to read."""
        return self.chat_is_new or (self.chat is not None and self.chat.message_count == 0)

    @property
    def thread_id(self) -> str:
        """A turn that answers continues the asking thread; any other starts its own."""
        if self.resumed is not None and self.resumed.thread_id:
            return self.resumed.thread_id
        return self.turn_id


def may_ask(turn: PreparedTurn) -> bool:
    """Whether the run can end waiting on a question, so its checkpoint matters. A plain
    greeting on a chat with no question claimed never asks (the greeting fast path): it
    runs without a checkpointer and costs no checkpoint write."""
    return turn.resumed is not None or not is_plain_greeting(turn.request.message)


def graph_input(turn: PreparedTurn) -> TurnState | Command[Any]:
    state = initial_state(turn)
    if turn.resumed is None:
        return state
    asked = turn.resumed.message_count
    answer = TurnInput(
        conversation=state.conversation,
        option_id=turn.answer,
        timed_out=turn.timed_out,
        chat_unchanged=turn.chat is not None and asked == turn.chat.message_count,
    )
    return Command(resume=answer.model_dump(mode="json"))


def graph_config(turn: PreparedTurn) -> RunnableConfig:
    """The thread's latest checkpoint: the one its question was saved in (the control
    record names it; a run that failed after it dropped the question). Addressing it by id
    would cost LangGraph's extra query for whether it was superseded."""
    return RunnableConfig(configurable={"thread_id": turn.thread_id}, recursion_limit=60)


def initial_state(turn: PreparedTurn) -> TurnState:
    chat, message_id = turn.chat, f"{turn.turn_id}-u"
    return TurnState(
        conversation=Conversation(
            user_message=turn.request.message,
            message_id=message_id,
            focus=turn.request.message,
            focus_message_id=message_id,
            focus_turn_id=turn.turn_id,
            summary=chat.summary if chat else "",
            summarized_until=chat.summarized_until if chat else None,
        ),
    )
