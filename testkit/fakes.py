"""Every store of the composition root as its in-memory fake, by ``Deps`` attribute name:
``Deps(settings, llm=..., **in_memory_stores(clock))`` runs a turn with no service at all."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from shared.adapters.rerankers import IdentityReranker
from shared.fakes.account import FakeArchive, FakeKeyspace
from shared.fakes.agent_data import FakeAgentDataStore
from shared.fakes.cache import FakeCache, FakeIdempotencyStore
from shared.fakes.calendar_feeds import FakeCalendarFeedStore
from shared.fakes.conversations import FakeConversationStore
from shared.fakes.executions import FakeExecutionStore
from shared.fakes.fact_history import FakeFactExpiry
from shared.fakes.facts import FakeContactStore, FakeFactStore, FakePendingStore
from shared.fakes.jobs import FakeJobStore, FakeOperatorAlerts
from shared.fakes.keyring import FakeKeyRing
from shared.fakes.outbox import FakeOutbox
from shared.fakes.profiles import FakeProfileStore
from shared.fakes.queues import FakePublisher, FakeTaskQueue
from shared.fakes.reminders import FakeNotificationStore, FakeReminderStore
from shared.fakes.sessions import FakeSessionMemory
from shared.fakes.trust import FakeTrustStore
from shared.graph.serde import checkpoint_serde
from shared.ports import Clock

# What lives in Firestore: a benchmark of the Firestore round trips keeps these real.
FIRESTORE_STORES = frozenset({"conversations", "checkpointer", "trust", "jobs", "operator_alerts"})


def in_memory_stores(clock: Clock, leave_out: frozenset[str] = frozenset()) -> dict[str, Any]:
    contacts = FakeContactStore(clock)
    facts = FakeFactStore(contacts, clock)
    inbox = FakeNotificationStore()
    stores: dict[str, Any] = {
        "conversations": FakeConversationStore(),
        "profiles": FakeProfileStore(),
        "keyring": FakeKeyRing(),
        "idempotency": FakeIdempotencyStore(),
        "cache": FakeCache(clock),
        "facts": facts,
        "executions": FakeExecutionStore(erased_at=facts.data.erased.get),
        "contacts": contacts,
        "pending": FakePendingStore(contacts),
        "sessions": FakeSessionMemory(contacts.data),
        "fact_expiry": FakeFactExpiry(contacts.data),
        "reranker": IdentityReranker(),
        "tasks": FakeTaskQueue(),
        "publisher": FakePublisher(),
        "checkpointer": InMemorySaver(serde=checkpoint_serde()),
        "trust": FakeTrustStore(),
        "jobs": FakeJobStore(),
        "operator_alerts": FakeOperatorAlerts(),
        "calendar_feeds": FakeCalendarFeedStore(),
        "agent_data": FakeAgentDataStore(),
        "notifications": inbox,
        "reminders": FakeReminderStore(inbox),
        "outbox": FakeOutbox(clock),  # records what would leave; no mail relay
        "push_channels": [],  # the Web Push and FCM adapters talk to services
        "account_conversations": FakeArchive(),
        "account_cache": FakeKeyspace(),
    }
    return {name: store for name, store in stores.items() if name not in leave_out}
