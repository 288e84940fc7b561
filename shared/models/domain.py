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


FactType = Literal[
    "Schedule",
    "Travel",
    "Health",
    "Allergy",
    "Medical",
    "Relationship",
    "Work",
    "Hobby",
    "Preference",
    "Contact",
    "Other",
]


class NewFact(Strict):
    text: str = Field(min_length=1, max_length=200)
    type: FactType = "Other"
    subject_entity_id: str | None = None  # None: a fact about the user
    relation_to_user: str = "self"
    confidence: float = Field(ge=0.0, le=1.0)
    idempotency_key: str
    embedding: list[float]
    embedding_model: str
    source_chat_id: str | None = None
    source_turn_id: str | None = None
    source_message_id: str | None = None


class StoredFact(Strict):
    id: str
    user_id: str
    text: str
    type: FactType
    subject_entity_id: str | None
    confidence: float
    source_turn_id: str | None
    created_at: datetime


class Person(Strict):
    id: str
    user_id: str
    display_name: str
    role_to_user: str = "other"
    aliases: list[str] = Field(default_factory=list)
