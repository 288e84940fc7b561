"""What the history services read (``shared.deps.Deps`` satisfies it), and the advisor's
port as the turn graph sees it."""

from __future__ import annotations

from typing import Protocol

from shared.config import Settings
from shared.models.history import Advice, FeedbackKind
from shared.ports import Clock, Embedder, ExecutionMemory


class HistoryPorts(Protocol):
    @property
    def settings(self) -> Settings: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def embedder(self) -> Embedder: ...
    @property
    def executions(self) -> ExecutionMemory: ...


class DecompositionAdvisor(Protocol):
    """Asked by the planner before its model call; told of the user's feedback."""

    def advise(self, user_id: str, request: str, language: str) -> Advice:
        """A suggestion from the user's similar past executions. Never fails for an
        outage: without its stores it suggests nothing (``source="planned"``)."""
        ...

    def feedback(
        self,
        user_id: str,
        key: str,
        kind: FeedbackKind,
        *,
        strategy_id: str | None = None,
        job_id: str | None = None,
    ) -> bool:
        """Mark a strategy down once per ``key``: named, or as the strategy of a job."""
        ...
