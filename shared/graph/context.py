"""Run-scoped dependencies, handed to nodes through LangGraph's runtime context."""

from __future__ import annotations

from dataclasses import dataclass

from shared.ports import LLM, Clock


@dataclass(frozen=True)
class TurnContext:
    user_id: str
    chat_id: str
    turn_id: str
    llm: LLM
    clock: Clock
