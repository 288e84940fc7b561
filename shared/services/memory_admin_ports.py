"""``MemoryAdminDeps``: the slice of the composition root the service reads, so that
``shared.deps.Deps`` satisfies it structurally and unit tests can hand in plain fakes.
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
    TrustStore,
    UserKeyspace,
)

__all__ = ["FactNotCurrent", "MemoryAdminDeps", "PendingNotOpen"]


class MemoryAdminDeps(Protocol):
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
    def clock(self) -> Clock: ...

    @property
    def account_conversations(self) -> ConversationArchive: ...

    @property
    def account_cache(self) -> UserKeyspace: ...
