"""Every store of the composition root as its in-memory fake, by ``Deps`` attribute name:
``Deps(settings, llm=..., **in_memory_stores(clock))`` runs a turn with no service at all."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from shared.adapters.memory_cache import MemoryCache, MemoryIdempotencyStore
from shared.adapters.memory_conversations import MemoryConversationStore
from shared.adapters.memory_facts import MemoryContactStore, MemoryFactStore, MemoryPendingStore
from shared.adapters.memory_jobs import MemoryJobStore, MemoryOperatorAlerts
from shared.adapters.memory_keyring import MemoryKeyRing
from shared.adapters.memory_profiles import MemoryProfileStore
from shared.adapters.memory_queues import MemoryPublisher, MemoryTaskQueue
from shared.adapters.memory_trust import MemoryTrustStore
from shared.graph.serde import checkpoint_serde
from shared.ports import Clock

# What lives in Firestore: a benchmark of the Firestore round trips keeps these real.
FIRESTORE_STORES = frozenset({"conversations", "checkpointer", "trust", "jobs", "operator_alerts"})


def in_memory_stores(clock: Clock, leave_out: frozenset[str] = frozenset()) -> dict[str, Any]:
    contacts = MemoryContactStore(clock)
    stores: dict[str, Any] = {
        "conversations": MemoryConversationStore(),
        "profiles": MemoryProfileStore(),
        "keyring": MemoryKeyRing(),
        "idempotency": MemoryIdempotencyStore(),
        "cache": MemoryCache(clock),
        "facts": MemoryFactStore(contacts, clock),
        "contacts": contacts,
        "pending": MemoryPendingStore(contacts),
        "tasks": MemoryTaskQueue(),
        "publisher": MemoryPublisher(),
        "checkpointer": InMemorySaver(serde=checkpoint_serde()),
        "trust": MemoryTrustStore(),
        "jobs": MemoryJobStore(),
        "operator_alerts": MemoryOperatorAlerts(),
    }
    return {name: store for name, store in stores.items() if name not in leave_out}
