"""Domain records shared by services, adapters and queue payloads."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from shared.models.base import Strict
from shared.models.wire import Interrupt, TurnResponse

Role = Literal["user", "assistant", "system"]


class PendingQuestion(Strict):
    """The question a chat waits on (at most one), kept on the chat document.

    ``resume_at`` is the graph's own record of where to continue (the original message,
    its intent, the plan): opaque to the stores, validated by the graph when read back.
    """

    interrupt: Interrupt
    blocking: bool  # False: a "by the way" question; the turn was answered anyway
    turn_id: str  # the turn that asked
    asked_at: datetime
    resume_at: dict[str, Any] = Field(default_factory=dict)


class Chat(Strict):
    id: str
    user_id: str
    created_at: datetime
    updated_at: datetime
    summary: str = ""  # running summary of the messages up to ``summarized_until``
    summarized_until: datetime | None = None
    pending: PendingQuestion | None = None


class ChatUpdate(Strict):
    """What a turn changes on its chat, written in the same commit as its messages."""

    summary: str | None = None  # set together with summarized_until
    summarized_until: datetime | None = None
    pending: PendingQuestion | None = None  # a new question to wait on
    clear_pending: bool = False  # the pending question was answered or abandoned


class NodeRun(Strict):
    node: str
    ms: float
    input_tokens: int = 0
    output_tokens: int = 0


class TurnMetadata(Strict):
    """What a turn did, kept on its turn record: which nodes ran, tokens, cost, timings."""

    outcome: Literal["ok", "failed"] = "ok"
    error_code: str | None = None
    failed_node: str | None = None
    route: str | None = None
    fast_path: bool = False
    flags: dict[str, bool] = Field(default_factory=dict)
    nodes: list[NodeRun] = Field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    graph_ms: float = 0.0
    extraction_enqueued: bool = False
    jobs_published: int = 0
    interrupt_kind: str | None = None


class TurnRecord(Strict):
    """A turn as recorded (``ConversationStore.get_turn``)."""

    status: Literal["running", "done", "failed"]
    chat_id: str
    turn_id: str
    response: TurnResponse | None = None
    metadata: TurnMetadata | None = None


class Message(Strict):
    id: str
    role: Role
    text: str
    created_at: datetime
    turn_id: str | None = None


class TurnClaim(Strict):
    """Outcome of claiming a ``client_message_id``: run it, replay it, or wait for it."""

    status: Literal["new", "done", "running"]
    turn_id: str
    chat_id: str
    response: TurnResponse | None = None


class ResolvedEntity(Strict):
    mention: str
    person_id: str | None = None  # None: the user themself (unless ``new_person``)
    confidence: float = Field(ge=0.0, le=1.0)
    new_person: bool = False  # the user said it is someone not yet known


class AssistantProfile(Strict):
    """The user's assistant: persona, presentation rules, zone. Firestore, one document."""

    persona_name: str = Field(default="Assistant", min_length=1, max_length=40)
    tone: str = Field(default="warm and concise", max_length=200)
    language: str | None = Field(default=None, pattern=r"^[a-z]{2}$")  # None: the user's
    timezone: str = Field(default="UTC", max_length=64)  # IANA name, checked on update
    presentation_rules: list[str] = Field(default_factory=list, max_length=10)
    privacy_mode: bool = False  # hides facts of high sensitivity from replies
    updated_at: datetime | None = None


class ExtractionTask(Strict):
    """Payload of the Cloud Task the turn enqueues for ``functions/extraction``."""

    user_id: str
    chat_id: str
    turn_id: str
    message_id: str
    text: str
    resolved_entities: list[ResolvedEntity] = Field(default_factory=list)
    has_preferences: bool = False
    timezone: str = "UTC"  # IANA name: "next Friday" is resolved in the user's zone
    avatar_id: str | None = None
    enqueued_at: datetime


class AgentJob(Strict):
    """Payload published to the agent-jobs topic for ``functions/agents``."""

    job_id: str
    user_id: str
    chat_id: str
    turn_id: str
    agent: str
    goal: str
    created_at: datetime
