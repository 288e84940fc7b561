"""``MemoryPorts``: the stores of the fact system that the settings API and the turn graph
read (held facts, persons, profile, trust). ``shared.deps.Deps`` satisfies it structurally,
so nothing here imports the composition root, and unit tests can hand in plain fakes.
"""

from __future__ import annotations

from typing import Protocol

from shared.errors import FactNotCurrent, PendingNotOpen
from shared.ports import (
    Cache,
    Clock,
    ContactStore,
    ConversationArchive,
    Embedder,
    FactStore,
    PendingStore,
    ProfileStore,
    Reranker,
    SessionMemory,
    TrustStore,
    UserKeyspace,
)

__all__ = ["FactNotCurrent", "MemoryPorts", "PendingNotOpen"]


class MemoryPorts(Protocol):
    @property
    def facts(self) -> FactStore: ...

    @property
    def contacts(self) -> ContactStore: ...

    @property
    def pending(self) -> PendingStore: ...

    @property
    def profiles(self) -> ProfileStore: ...

    @property
    def trust(self) -> TrustStore:
        """Human-in-the-loop trust: level, counters, pinned mode (``/settings/hitl/*``)."""
        ...

    @property
    def cache(self) -> Cache:
        """Holds the per-user turn context, dropped after every change it reflects."""
        ...

    @property
    def embedder(self) -> Embedder: ...

    @property
    def sessions(self) -> SessionMemory:
        """Chats' running summaries: the session channel of retrieval."""
        ...

    @property
    def reranker(self) -> Reranker: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def account_conversations(self) -> ConversationArchive: ...

    @property
    def account_cache(self) -> UserKeyspace: ...
