"""Domain records shared by services, adapters and queue payloads."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from shared.models.base import Strict
from shared.models.wire import TurnResponse

Role = Literal["user", "assistant", "system"]


class Chat(Strict):
    id: str
    user_id: str
    created_at: datetime
    updated_at: datetime
    summary: str = ""


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
    person_id: str | None = None  # None: the user themself
    confidence: float = Field(ge=0.0, le=1.0)


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
