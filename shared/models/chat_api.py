"""The ``/v1`` wire contract of chats, their messages and questions, and agent jobs
(``docs/openapi.yaml``, ``docs/api.md``). Bodies are strict JSON; resources answer with
their ``id`` (the last segment of their URL)."""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, Field

from shared.models.base import Strict
from shared.models.wire import CLIENT_ID_PATTERN, ChatMessage, Interrupt, MultitaskStrategy

MAX_TITLE_LENGTH = 200


class NewChat(Strict):
    """``POST /v1/chats``: an empty chat; the title, if not given, comes from its first
    message that says something."""

    title: str = Field(default="", max_length=MAX_TITLE_LENGTH)


class ChatPatch(Strict):
    """``PATCH /v1/chats/{chat}``: the fields to change (only ``title`` may), and the etag
    read, if the change is conditional (else ``If-Match``)."""

    title: str = Field(min_length=1, max_length=MAX_TITLE_LENGTH)
    etag: str | None = None


class ChatResource(Strict):
    id: str
    title: str  # empty until its first message that says something, or the user names it
    etag: str  # of what the user may change: the title
    created_at: AwareDatetime
    updated_at: AwareDatetime  # its last message: the list's order
    message_count: int
    question: Interrupt | None  # the question it waits on, answered with ``:answer``


class ChatPage(Strict):
    chats: list[ChatResource]
    next_page_token: str


class NewMessage(Strict):
    """``POST /v1/chats/{chat}/messages``: a turn. ``client_message_id`` is its request id:
    a retry answers the first result. ``stream`` (or ``Accept: text/event-stream``) answers
    Server-Sent Events."""

    message: str = Field(min_length=1)  # the length cap comes from Settings
    client_message_id: str = Field(pattern=CLIENT_ID_PATTERN)
    stream: bool = False
    multitask_strategy: MultitaskStrategy = "enqueue"


class MessagePage(Strict):
    messages: list[ChatMessage]
    next_page_token: str
    question: Interrupt | None  # the chat's waiting question, so one poll sees both


class Answer(Strict):
    """``POST /v1/chats/{chat}/questions/{question}:answer``: an option's id, or words."""

    answer: str = Field(min_length=1)
    stream: bool = False


JobView = Literal["running", "waiting", "paused", "stalled", "done", "aborted", "cancelled"]


class JobSubtask(Strict):
    id: str
    agent: str
    goal: str
    status: str
    result: str = ""


class JobResource(Strict):
    id: str
    chat_id: str
    goal: str
    status: JobView
    control: str  # a pause or cancel the running job will see before its next step
    subtasks: list[JobSubtask]
    outcome: str  # the final report, once finished
    created_at: AwareDatetime
    updated_at: AwareDatetime


class JobPage(Strict):
    jobs: list[JobResource]
    next_page_token: str
