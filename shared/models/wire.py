"""The HTTP wire contract, mirrored in ``docs/openapi.yaml``."""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, Field

from shared.models.agent_data import WebSource
from shared.models.base import Strict

# Ids chosen by clients travel into Firestore document paths and Cloud Tasks names:
# a closed alphabet keeps them from ever naming another path.
CLIENT_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"
CHAT_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"

InterruptKind = Literal["disambiguation", "approval", "fact_conflict", "clarification"]
ReplyKind = Literal["text", "question", "progress", "fallback", "interrupted"]
# What a stored chat message is: a reply's kind, or what background work posted (a job's
# ``result``; a ``notice`` nobody asked for: a job stalled, an email failed). Clients show a
# message by it, never by reading its text.
MessageKind = Literal[ReplyKind, "result", "notice"]
# Double texting: what a message does when another turn of its chat is running.
MultitaskStrategy = Literal["enqueue", "reject", "interrupt"]


class TurnRequest(Strict):
    chat_id: str | None = Field(default=None, pattern=CHAT_ID_PATTERN)
    message: str = Field(min_length=1)  # the length cap comes from Settings
    client_message_id: str = Field(pattern=CLIENT_ID_PATTERN)
    stream: bool = False
    multitask_strategy: MultitaskStrategy = "enqueue"


class ResumeRequest(Strict):
    chat_id: str = Field(pattern=CHAT_ID_PATTERN)
    interrupt_id: str = Field(pattern=CLIENT_ID_PATTERN)
    answer: str = Field(min_length=1)


class InterruptOption(Strict):
    id: str
    label: str


class Interrupt(Strict):
    id: str
    kind: InterruptKind
    question: str
    options: list[InterruptOption] = Field(default_factory=list)


class Reply(Strict):
    text: str
    kind: ReplyKind = "text"


class TurnResponse(Strict):
    chat_id: str
    turn_id: str
    reply: Reply
    interrupt: Interrupt | None = None
    jobs: list[str] = Field(default_factory=list)  # agent jobs the turn started (job ids)


class ErrorBody(Strict):
    code: str
    message: str


class ErrorResponse(Strict):
    error: ErrorBody


class ChatMessage(Strict):
    id: str
    role: Literal["user", "assistant", "system"]
    text: str
    created_at: AwareDatetime
    sources: list[WebSource] = Field(default_factory=list)  # https links only
    search_suggestions_html: str = ""  # Google's widget: shown with a grounded answer
    kind: MessageKind
    question_id: str | None = None  # the interrupt a ``question`` asked
