"""``MemoryAdminDeps``: the slice of the composition root the service reads, so that
``shared.deps.Deps`` satisfies it structurally and unit tests can hand in plain fakes.
"""

from __future__ import annotations

from typing import Protocol

from shared.errors import FactNotCurrent, PendingNotOpen
from shared.ports import (
    Clock,
    ContactStore,
    ConversationArchive,
    Embedder,
    FactStore,
    PendingStore,
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
    def embedder(self) -> Embedder: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def account_conversations(self) -> ConversationArchive: ...

    @property
    def account_cache(self) -> UserKeyspace: ...
