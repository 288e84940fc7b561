"""What the history services read (``shared.deps.Deps`` satisfies it)."""

from __future__ import annotations

from typing import Protocol

from shared.config import Settings
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
