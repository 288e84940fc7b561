"""Unit fixtures: the composition root filled with in-memory fakes and the scripted model."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from shared.adapters.clock import FixedClock
from shared.adapters.memory_cache import MemoryCache, MemoryIdempotencyStore
from shared.adapters.memory_conversations import MemoryConversationStore
from shared.adapters.memory_facts import MemoryContactStore, MemoryFactStore, MemoryPendingStore
from shared.adapters.memory_jobs import MemoryJobStore, MemoryOperatorAlerts
from shared.adapters.memory_keyring import MemoryKeyRing
from shared.adapters.memory_profiles import MemoryProfileStore
from shared.adapters.memory_queues import MemoryPublisher, MemoryTaskQueue
from shared.adapters.memory_trust import MemoryTrustStore
from shared.adapters.scripted_llm import HashEmbedder, ScriptedLLM
from shared.config import Settings
from shared.deps import Deps
from shared.graph.serde import checkpoint_serde


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(datetime(2026, 11, 21, 12, 0, tzinfo=UTC))


@pytest.fixture
def llm() -> ScriptedLLM:
    return ScriptedLLM()


@pytest.fixture
def deps(clock: FixedClock, llm: ScriptedLLM) -> Deps:
    settings = Settings(env="test", model_provider="scripted", rate_limit_per_minute=5)
    contacts = MemoryContactStore(clock)
    return Deps(
        settings,
        clock=clock,
        llm=llm,
        embedder=HashEmbedder(dimension=64),
        conversations=MemoryConversationStore(),
        profiles=MemoryProfileStore(),
        keyring=MemoryKeyRing(),
        idempotency=MemoryIdempotencyStore(),
        cache=MemoryCache(clock),
        facts=MemoryFactStore(contacts, clock),
        contacts=contacts,
        pending=MemoryPendingStore(contacts),
        tasks=MemoryTaskQueue(),
        publisher=MemoryPublisher(),
        checkpointer=InMemorySaver(serde=checkpoint_serde()),
        trust=MemoryTrustStore(),
        jobs=MemoryJobStore(),
        operator_alerts=MemoryOperatorAlerts(),
    )
