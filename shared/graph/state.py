"""Turn state: small and namespaced. Durable data lives in the stores, not here."""

from __future__ import annotations

import operator
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from shared.models.domain import Message

Route = Literal["greeting", "simple", "complex"]


class _State(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Conversation(_State):
    user_message: str
    history: list[Message] = Field(default_factory=list)
    language: str = "en"


class Intent(_State):
    route: Route
    has_extractable_facts: bool = False
    has_preferences: bool = False
    needs_semantic_retrieval: bool = False
    needs_temporal_retrieval: bool = False
    entities: list[str] = Field(default_factory=list)
    fast_path: bool = False  # decided by a rule, no model call


class PlannedJob(_State):
    agent: str
    goal: str


class Planning(_State):
    jobs: list[PlannedJob] = Field(default_factory=list)


class ResponseState(_State):
    text: str
    kind: Literal["text", "progress", "fallback"] = "text"


class Accounting(_State):
    input_tokens: int = 0
    output_tokens: int = 0


class TurnState(_State):
    conversation: Conversation
    intent: Intent | None = None
    planning: Planning = Field(default_factory=Planning)
    response: ResponseState | None = None
    usage: Annotated[list[Accounting], operator.add] = Field(default_factory=list)
    nodes_run: Annotated[list[str], operator.add] = Field(default_factory=list)
