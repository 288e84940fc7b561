"""Backends for the contract tests: every port fixture runs once on the in-memory fake and
once on the real service of the local stack (Firestore emulator, Redis, PostgreSQL+pgvector,
Cloud Tasks emulator, Pub/Sub emulator).

Real backends are shared per session; tests keep apart by unique user ids, key prefixes and
queue names. PostgreSQL gets a fresh database per session, built by the migrations.
"""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import redis
from google.cloud import firestore, pubsub_v1, tasks_v2

from scripts.stacklib.mail_server import SmtpServer
from shared.adapters.cloud_tasks import CloudTasksTaskQueue, build_tasks_client
from shared.adapters.firestore_agent_data import FirestoreAgentDataStore
from shared.adapters.firestore_calendar_feeds import FirestoreCalendarFeedStore
from shared.adapters.firestore_conversations import FirestoreConversationStore
from shared.adapters.firestore_idempotency import FirestoreIdempotencyStore
from shared.adapters.firestore_notifications import FirestoreNotificationStore
from shared.adapters.firestore_outbox import FirestoreOutbox
from shared.adapters.firestore_profiles import FirestoreProfileStore
from shared.adapters.firestore_reminders import FirestoreReminderStore
from shared.adapters.firestore_trust import FirestoreTrustStore
from shared.adapters.keyring_local import LocalKek
from shared.adapters.migrations import apply_migrations
from shared.adapters.postgres import Database, connect, run_outside_transaction
from shared.adapters.postgres_contacts import PostgresContactStore
from shared.adapters.postgres_fact_history import PostgresFactExpiry
from shared.adapters.postgres_facts import PostgresFactStore
from shared.adapters.postgres_keyring import PostgresKeyRing
from shared.adapters.postgres_pending import PostgresPendingStore
from shared.adapters.postgres_sessions import PostgresSessionMemory
from shared.adapters.pubsub import PubSubPublisher
from shared.adapters.redis_cache import RedisCache
from shared.adapters.smtp_mailer import SmtpMailer
from shared.config import Settings
from shared.fakes.agent_data import FakeAgentDataStore
from shared.fakes.cache import FakeCache, FakeIdempotencyStore
from shared.fakes.calendar_feeds import FakeCalendarFeedStore
from shared.fakes.clock import FixedClock
from shared.fakes.conversations import FakeConversationStore
from shared.fakes.fact_history import FakeFactExpiry
from shared.fakes.facts import FakeContactStore, FakeFactStore, FakePendingStore
from shared.fakes.keyring import FakeKeyRing
from shared.fakes.outbox import FakeOutbox
from shared.fakes.profiles import FakeProfileStore
from shared.fakes.queues import FakePublisher, FakeTaskQueue
from shared.fakes.reminders import FakeNotificationStore, FakeReminderStore
from shared.fakes.sessions import FakeSessionMemory
from shared.fakes.trust import FakeTrustStore
from shared.ports import (
    AgentDataStore,
    Cache,
    CalendarFeedStore,
    ContactStore,
    ConversationStore,
    FactExpiry,
    FactStore,
    IdempotencyStore,
    KeyRing,
    NotificationStore,
    Outbox,
    PendingStore,
    ProfileStore,
    Publisher,
    ReminderStore,
    SessionMemory,
    TaskQueue,
    TrustStore,
)

BACKENDS = ["fake", pytest.param("real", marks=pytest.mark.stack)]


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def user_id() -> str:
    return unique("user")


# -- real services, one per session -------------------------------------------------------
@pytest.fixture(scope="session")
def settings() -> Settings:
    return Settings()


@pytest.fixture(scope="session")
def firestore_client(settings: Settings) -> Iterator[firestore.Client]:
    client = firestore.Client(project=settings.gcp_project)
    yield client
    client.close()  # type: ignore[no-untyped-call]


@pytest.fixture(scope="session")
def redis_client(settings: Settings) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(settings.redis_url, socket_timeout=5)
    yield client
    client.close()


@contextmanager
def fresh_database(settings: Settings) -> Iterator[Settings]:
    """Settings pointing at a new, empty database that is dropped afterwards."""
    if not settings.database_url:
        pytest.fail("DATABASE_URL is not set: the stack's env file must provide it")
    name = unique("contract").replace("-", "_")
    run_outside_transaction(settings, f"CREATE DATABASE {name}")
    base = settings.database_url.rsplit("/", 1)[0]
    try:
        yield settings.model_copy(update={"database_url": f"{base}/{name}"})
    finally:
        run_outside_transaction(settings, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(scope="session")
def pg_settings(settings: Settings) -> Iterator[Settings]:
    with fresh_database(settings) as fresh:
        yield fresh


@pytest.fixture(scope="session")
def database(pg_settings: Settings) -> Iterator[Database]:
    conn = connect(pg_settings)
    try:
        apply_migrations(conn)
    finally:
        conn.close()
    db = Database(pg_settings)
    yield db
    db.close()


# -- port fixtures, parametrised over the backends ----------------------------------------
def _real(request: pytest.FixtureRequest, name: str) -> Any:
    request.getfixturevalue("stack_env")  # fails, not skips, when the stack is down
    return request.getfixturevalue(name)


@pytest.fixture(params=BACKENDS)
def conversations(request: pytest.FixtureRequest) -> ConversationStore:
    if request.param == "fake":
        return FakeConversationStore()
    return FirestoreConversationStore(_real(request, "firestore_client"))


@pytest.fixture(params=BACKENDS)
def profiles(request: pytest.FixtureRequest) -> ProfileStore:
    if request.param == "fake":
        return FakeProfileStore()
    return FirestoreProfileStore(_real(request, "firestore_client"))


@pytest.fixture(params=BACKENDS)
def trust_store(request: pytest.FixtureRequest) -> TrustStore:
    if request.param == "fake":
        return FakeTrustStore()
    return FirestoreTrustStore(_real(request, "firestore_client"))


@pytest.fixture(params=BACKENDS)
def idempotency(request: pytest.FixtureRequest) -> IdempotencyStore:
    if request.param == "fake":
        return FakeIdempotencyStore()
    return FirestoreIdempotencyStore(_real(request, "firestore_client"))


@dataclass
class CacheBackend:
    cache: Cache
    advance: Callable[[float], None]  # let time pass: moves the fake clock, sleeps for Redis


@pytest.fixture(params=BACKENDS)
def cache_backend(request: pytest.FixtureRequest) -> CacheBackend:
    if request.param == "fake":
        clock = FixedClock()

        def advance(seconds: float) -> None:
            clock.advance(seconds)

        return CacheBackend(FakeCache(clock), advance)
    cache = RedisCache(_real(request, "redis_client"), prefix=unique("contract"))
    return CacheBackend(cache, time.sleep)


@pytest.fixture(scope="session")
def local_kek(settings: Settings) -> LocalKek:
    if not settings.local_kek_file:
        pytest.fail("LOCAL_KEK_FILE is not set: run `scripts/stack up --profile test`")
    return LocalKek(settings.local_kek_file)


@dataclass
class KeyRingBackend:
    keys: KeyRing
    # Another instance over the same storage (a second function instance: empty cache).
    another: Callable[[], KeyRing]


@pytest.fixture(params=BACKENDS)
def keyring_backend(request: pytest.FixtureRequest) -> KeyRingBackend:
    if request.param == "fake":
        keys = FakeKeyRing()
        return KeyRingBackend(keys, lambda: keys)
    db: Database = _real(request, "database")
    kek: LocalKek = request.getfixturevalue("local_kek")
    return KeyRingBackend(PostgresKeyRing(db, kek), lambda: PostgresKeyRing(db, kek))


@dataclass
class FactBackend:
    facts: FactStore
    contacts: ContactStore
    pending: PendingStore
    keys: KeyRing
    database: Database | None = None  # the real backend's, for checks below the adapters
    sessions: SessionMemory | None = None
    expiry: FactExpiry | None = None


@pytest.fixture(params=BACKENDS)
def fact_backend(request: pytest.FixtureRequest) -> FactBackend:
    if request.param == "fake":
        contacts = FakeContactStore(FixedClock())
        facts = FakeFactStore(contacts)
        return FactBackend(
            facts,
            contacts,
            FakePendingStore(contacts),
            FakeKeyRing(),
            sessions=FakeSessionMemory(contacts.data),
            expiry=FakeFactExpiry(contacts.data),
        )
    db: Database = _real(request, "database")
    keys = PostgresKeyRing(db, request.getfixturevalue("local_kek"))
    return FactBackend(
        PostgresFactStore(db, keys),
        PostgresContactStore(db, keys),
        PostgresPendingStore(db, keys),
        keys,
        db,
        sessions=PostgresSessionMemory(db, keys),
        expiry=PostgresFactExpiry(db),
    )


@pytest.fixture(scope="session")
def tasks_queue_name(settings: Settings) -> Iterator[tuple[CloudTasksTaskQueue, str]]:
    """A real queue adapter and a queue created for this session on the tasks emulator."""
    if not settings.cloud_tasks_emulator_host:
        pytest.skip("CLOUD_TASKS_EMULATOR_HOST is not set: the stack's tasks emulator is not up")
    client = build_tasks_client(settings)
    queue = unique("contract")
    parent = f"projects/{settings.gcp_project}/locations/{settings.tasks_location}"
    client.create_queue(parent=parent, queue=tasks_v2.Queue(name=f"{parent}/queues/{queue}"))
    adapter = CloudTasksTaskQueue(
        client, settings.gcp_project, settings.tasks_location, settings.tasks_invoker_email
    )
    yield adapter, queue
    client.transport.close()  # type: ignore[no-untyped-call]


@dataclass
class QueueBackend:
    queue: TaskQueue
    queue_name: str


@pytest.fixture(params=BACKENDS)
def queue_backend(request: pytest.FixtureRequest) -> QueueBackend:
    if request.param == "fake":
        return QueueBackend(FakeTaskQueue(), "extraction")
    adapter, queue = _real(request, "tasks_queue_name")
    return QueueBackend(adapter, queue)


@dataclass
class PublisherBackend:
    publisher: Publisher
    topic: str
    # What a subscriber got, waiting for at least the given number of messages.
    received: Callable[[int], list[tuple[bytes, dict[str, str]]]]


@pytest.fixture(scope="session")
def pubsub_topic(settings: Settings) -> Iterator[tuple[PubSubPublisher, str, Any]]:
    """A topic with one pull subscription on the Pub/Sub emulator, for this session."""
    publisher_client = pubsub_v1.PublisherClient()
    subscriber = pubsub_v1.SubscriberClient()
    topic = unique("contract")
    topic_path = publisher_client.topic_path(settings.gcp_project, topic)
    subscription = subscriber.subscription_path(settings.gcp_project, topic)
    publisher_client.create_topic(name=topic_path)
    subscriber.create_subscription(name=subscription, topic=topic_path)
    yield PubSubPublisher(publisher_client, settings.gcp_project), topic, (subscriber, subscription)
    publisher_client.stop()
    publisher_client.transport.close()
    subscriber.close()


@pytest.fixture(params=BACKENDS)
def publisher_backend(request: pytest.FixtureRequest) -> PublisherBackend:
    if request.param == "fake":
        fake = FakePublisher()
        return PublisherBackend(
            fake, "agent-jobs", lambda _: [(m.data, m.attributes) for m in fake.messages]
        )
    publisher, topic, (subscriber, subscription) = _real(request, "pubsub_topic")

    def received(expected: int) -> list[tuple[bytes, dict[str, str]]]:
        got: list[tuple[bytes, dict[str, str]]] = []
        for _ in range(5):  # a pull may return only part of what is there
            response = subscriber.pull(subscription=subscription, max_messages=10, timeout=10)
            messages = response.received_messages
            if messages:
                subscriber.acknowledge(
                    subscription=subscription, ack_ids=[m.ack_id for m in messages]
                )
            got += [(m.message.data, dict(m.message.attributes)) for m in messages]
            if len(got) >= expected:
                break
        return got

    return PublisherBackend(publisher, topic, received)


@pytest.fixture(params=BACKENDS)
def agent_data(request: pytest.FixtureRequest) -> AgentDataStore:
    if request.param == "fake":
        return FakeAgentDataStore()
    return FirestoreAgentDataStore(_real(request, "firestore_client"))


@pytest.fixture(params=BACKENDS)
def outbox(request: pytest.FixtureRequest) -> Outbox:
    clock = FixedClock()
    if request.param == "fake":
        return FakeOutbox(clock)
    return FirestoreOutbox(_real(request, "firestore_client"), clock)


@pytest.fixture
def smtp_server() -> Iterator[SmtpServer]:
    """A real SMTP server (aiosmtpd) in this process, accepting everything."""
    server = SmtpServer().start()
    yield server
    server.stop()


@pytest.fixture(params=["refuse", "silent", "down"])
def faulty_relay(request: pytest.FixtureRequest) -> Iterator[tuple[str, int]]:
    """(fault, port): a relay that refuses every recipient (550), one that takes the data
    and never answers, and one that is down (nobody listens on the port)."""
    if request.param == "down":
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        yield "down", port
        return
    server = SmtpServer(behaviour=request.param).start()
    yield request.param, server.port
    server.stop()


@pytest.fixture(params=BACKENDS)
def faulty_outbox(request: pytest.FixtureRequest, faulty_relay: tuple[str, int]) -> Outbox:
    """An outbox whose relay has ``faulty_relay``'s fault (a short timeout for the silent)."""
    clock = FixedClock()
    mailer = SmtpMailer(
        "127.0.0.1", faulty_relay[1], "assistant@example.org", "Assistant", clock,
        starttls=False, timeout=0.5,
    )  # fmt: skip
    if request.param == "fake":
        return FakeOutbox(clock, mailer)
    return FirestoreOutbox(_real(request, "firestore_client"), clock, mailer)


@pytest.fixture(params=BACKENDS)
def delivering_outbox(request: pytest.FixtureRequest, smtp_server: SmtpServer) -> Outbox:
    """An outbox that hands each message to ``smtp_server``."""
    clock = FixedClock()
    mailer = SmtpMailer(
        "127.0.0.1", smtp_server.port, "assistant@example.org", "Assistant", clock,
        starttls=False, timeout=5,
    )  # fmt: skip
    if request.param == "fake":
        return FakeOutbox(clock, mailer)
    return FirestoreOutbox(_real(request, "firestore_client"), clock, mailer)


@pytest.fixture(params=BACKENDS)
def calendar_feeds(request: pytest.FixtureRequest) -> CalendarFeedStore:
    if request.param == "fake":
        return FakeCalendarFeedStore()
    return FirestoreCalendarFeedStore(_real(request, "firestore_client"))


@dataclass
class NotifyBackend:
    reminders: ReminderStore
    inbox: NotificationStore


@pytest.fixture(params=BACKENDS)
def notify_backend(request: pytest.FixtureRequest) -> NotifyBackend:
    """The reminder store and the inbox it rings into, on one backend."""
    if request.param == "fake":
        inbox = FakeNotificationStore()
        return NotifyBackend(FakeReminderStore(inbox), inbox)
    client = _real(request, "firestore_client")
    return NotifyBackend(FirestoreReminderStore(client), FirestoreNotificationStore(client))
