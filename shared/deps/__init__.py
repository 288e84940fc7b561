"""Composition root: every client is built lazily, once per function instance.

Nothing connects when ``Deps`` is built; the first request that needs a store builds it,
unless the function connected its stores while starting (``connect``: the turn function's
warm-up does, so no user's first turn pays for it). Tests build ``Deps(settings)`` and
replace any component with a fake by keyword:
``Deps(settings, llm=ScriptedLLM(...), conversations=FakeConversationStore())``.

Over 400 lines on purpose: one lazily built property per port, a few lines each, and the one
question a reader brings here (which adapter serves this port, built from which settings) is
answered by searching for the port's name; split by backend, the shared clients (Firestore,
Redis, PostgreSQL, the breakers) would be reached across modules.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Collection
from datetime import timedelta
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from shared.services.rate_limit import RateLimiter
    from shared.understanding import UnderstandingTier

from shared.auth import InternalTokenVerifier, UserTokenVerifier
from shared.config import Settings, get_settings
from shared.errors import ConfigurationError
from shared.ports import (
    LLM,
    AgentDataStore,
    Cache,
    CalendarFeedStore,
    Clock,
    ContactStore,
    ConversationArchive,
    ConversationStore,
    DecompositionAdvisor,
    EmailNotices,
    Embedder,
    EmbeddingMigration,
    ExecutionMemory,
    FactExpiry,
    FactStore,
    IdempotencyStore,
    JobStore,
    KeyRing,
    Mailer,
    NotificationStore,
    OperatorAlerts,
    Outbox,
    PendingStore,
    ProfileStore,
    Publisher,
    PushChannel,
    ReminderBook,
    ReminderStore,
    Reranker,
    SessionMemory,
    TaskQueue,
    TrustStore,
    UserKeyspace,
    WebSearch,
)
from shared.rest.paging import PageTokens

# What a turn's clients are built from (``Deps.preload``): compiling and importing these is
# most of a first turn's cost on a fresh instance (about 1.8 s of 2.1 s, bench.cold_start).
TURN_MODULES = (
    "shared.adapters.firestore_client", "shared.adapters.firestore_conversations",
    "shared.adapters.firestore_checkpoints", "shared.adapters.firestore_profiles",
    "shared.graph.serde", "shared.adapters.breaker", "shared.adapters.redis_cache",
    "shared.services.rate_limit", "shared.adapters.postgres", "shared.adapters.postgres_keyring",
    "shared.adapters.postgres_facts", "shared.adapters.postgres_sessions",
    "shared.adapters.postgres_contacts", "shared.adapters.postgres_executions",
    "shared.adapters.postgres_pending", "shared.services.history.advisor",
    "shared.adapters.cloud_tasks", "shared.adapters.pubsub", "shared.deps.models",
    "shared.adapters.keyring_local", "shared.adapters.keyring_kms",
    # what LangGraph imports on a graph's first run
    "langchain_core.tracers.context", "langchain_core.tracers.run_collector",
    "langchain_core.tracers.stdout",
)  # fmt: skip
# The ports a turn uses, built at start (``Deps.connect``).
TURN_PORTS = (
    "conversations", "profiles", "checkpointer", "cache", "rate_limiter", "keyring", "facts",
    "contacts",  # the names of the user's people, with the turn's context
    "advisor", "tasks", "publisher", "user_tokens",
)  # fmt: skip


class Deps:
    def __init__(self, settings: Settings, **overrides: Any) -> None:
        self.settings = settings
        for name, value in overrides.items():
            if not isinstance(getattr(type(self), name, None), cached_property):
                raise TypeError(f"unknown dependency {name!r}")
            self.__dict__[name] = value  # pre-fills the cached_property

    def preload(self) -> None:
        """Import the modules a turn's clients are built from (``TURN_MODULES``) and build
        the Vertex client; no store client is built: nothing connects."""
        for name in TURN_MODULES:
            importlib.import_module(name)
        if self.settings.model_provider == "vertex":
            # Its SSL contexts and HTTP stack (0.1 s); with the project set, genai loads the
            # credentials on the first request, so building the client opens no socket.
            # Then its request and response types, built once without a request.
            prepare = getattr(self.llm, "prepare", None)
            if prepare is not None:
                prepare()

    def connect(self, skip: Collection[str] = ()) -> list[str]:
        """Build the turn's ports (``TURN_PORTS``: their clients, channels not yet open) and
        open what a turn's first store calls would: two PostgreSQL connections (a recall
        holds two), Redis's, and Firestore's channel with the calls a turn's claim makes
        (a read-only transaction reading a document that does not exist: begin, read,
        commit of no write), so no user's turn pays for connecting. Returns what failed;
        a store connects on first use, as before (a store that is down degrades the turn as
        documented, it never stops the instance from starting). ``skip`` names what not to
        open (a forked worker skips what did not answer in the master)."""
        failed = []
        for name, opener in (
            ("ports", self._build_turn_ports),
            ("postgres", self._connect_postgres),
            ("redis", self._ping_redis),
            ("firestore", self._open_firestore),
        ):
            if name in skip:
                continue
            try:
                opener()
            except Exception:  # any failure: that store connects on first use
                logging.getLogger("warmup").warning("%s did not answer at start", name)
                failed.append(name)
        return failed

    def _build_turn_ports(self) -> None:
        for name in TURN_PORTS:
            getattr(self, name)

    def _open_firestore(self) -> None:
        from google.cloud import firestore

        document = self._firestore.collection("warmup").document("-")

        @firestore.transactional
        def read(transaction: firestore.Transaction) -> None:
            document.get(transaction=transaction)

        read(self._firestore.transaction(max_attempts=1))

    def _ping_redis(self) -> None:
        self._redis.ping()

    def _connect_postgres(self) -> None:
        with self._database.transaction() as one, self._database.transaction() as two:
            one.execute("SELECT 1")
            two.execute("SELECT 1")

    @cached_property
    def clock(self) -> Clock:
        from shared.adapters.clock import OffsetFileClock, SystemClock

        if self.settings.clock_offset_file:  # dev/test only (Settings refuse it elsewhere)
            return OffsetFileClock(self.settings.clock_offset_file)
        return SystemClock()

    @cached_property
    def page_tokens(self) -> PageTokens:
        return PageTokens(self.settings.page_token_secret)

    @cached_property
    def _firestore(self) -> Any:
        from shared.adapters.firestore_client import bounded_client

        s = self.settings
        return bounded_client(s.gcp_project, s.firestore_deadline_seconds)

    @cached_property
    def conversations(self) -> ConversationStore:
        from shared.adapters.firestore_conversations import FirestoreConversationStore

        return FirestoreConversationStore(self._firestore)

    @cached_property
    def checkpointer(self) -> BaseCheckpointSaver[Any]:
        """The turn graph's checkpoints (Firestore); tests may pass LangGraph's InMemorySaver."""
        from shared.adapters.firestore_checkpoints import FirestoreSaver
        from shared.adapters.firestore_conversations import DEFAULT_TURN_TTL
        from shared.graph.serde import checkpoint_serde

        # Expire before the turn records that name the threads (account erasure finds them).
        ttl = DEFAULT_TURN_TTL - timedelta(hours=1)
        return FirestoreSaver(self._firestore, ttl=ttl, serde=checkpoint_serde())

    @cached_property
    def profiles(self) -> ProfileStore:
        from shared.adapters.firestore_profiles import FirestoreProfileStore

        return FirestoreProfileStore(self._firestore)

    @cached_property
    def trust(self) -> TrustStore:
        from shared.adapters.firestore_trust import FirestoreTrustStore

        return FirestoreTrustStore(self._firestore)

    @cached_property
    def idempotency(self) -> IdempotencyStore:
        from shared.adapters.firestore_idempotency import FirestoreIdempotencyStore

        return FirestoreIdempotencyStore(self._firestore)

    @cached_property
    def jobs(self) -> JobStore:
        from shared.adapters.firestore_jobs import FirestoreJobStore

        return FirestoreJobStore(self._firestore)

    @cached_property
    def operator_alerts(self) -> OperatorAlerts:
        from shared.adapters.webhook_alerts import WebhookOperatorAlerts

        return WebhookOperatorAlerts(self.settings.operator_webhook_url)

    @cached_property
    def agent_data(self) -> AgentDataStore:
        from shared.adapters.firestore_agent_data import FirestoreAgentDataStore

        return FirestoreAgentDataStore(self._firestore)

    @cached_property
    def mailer(self) -> Mailer | None:
        """The mail relay, or None when the outbox only records (``outbox_provider``)."""
        s = self.settings
        if s.outbox_provider == "firestore":
            return None
        from shared.adapters.smtp_mailer import SmtpMailer

        password = s.smtp_password.get_secret_value() if s.smtp_password else ""
        return SmtpMailer(
            s.smtp_host, s.smtp_port, s.mail_from_address, s.mail_from_name, self.clock,
            username=s.smtp_username, password=password, starttls=s.smtp_starttls,
            timeout=s.smtp_timeout_seconds,
        )  # fmt: skip

    @cached_property
    def reminders(self) -> ReminderStore:
        from shared.adapters.firestore_reminders import FirestoreReminderStore

        return FirestoreReminderStore(self._firestore)

    @cached_property
    def reminder_book(self) -> ReminderBook:
        from shared.services.reminders.book import ReminderBook as Book

        return Book(self.settings, self.tasks, self.reminders, self.clock)

    @cached_property
    def notifications(self) -> NotificationStore:
        from shared.adapters.firestore_notifications import FirestoreNotificationStore

        return FirestoreNotificationStore(self._firestore)

    @cached_property
    def push_channels(self) -> list[PushChannel]:
        """Web Push and FCM, each when configured (the inbox needs neither)."""
        s = self.settings
        channels: list[PushChannel] = []
        pem = s.web_push_pem
        if pem is not None:
            from shared.adapters.web_push import WebPushChannel

            hosts = frozenset(h.strip().lower() for h in s.web_push_hosts.split(",") if h.strip())
            channels.append(WebPushChannel(pem, s.web_push_subject, hosts, s.web_push_ca_file))
        if s.fcm_enabled:
            from shared.adapters.fcm import FcmChannel, google_token

            token = (lambda: str(s.fcm_access_token)) if s.fcm_access_token else google_token()
            project = s.fcm_project or s.gcp_project
            channels.append(FcmChannel(project, token, s.fcm_base_url))
        return channels

    @cached_property
    def web_push_public_key(self) -> str:
        """The VAPID public key browsers subscribe with ("" when Web Push is off)."""
        pem = self.settings.web_push_pem
        if pem is None:
            return ""
        from shared.adapters.web_push import public_key_of

        return public_key_of(pem)

    @cached_property
    def outbox(self) -> Outbox:
        from shared.adapters.firestore_outbox import FirestoreOutbox

        return FirestoreOutbox(self._firestore, self.clock, self.mailer)

    @cached_property
    def calendar_feeds(self) -> CalendarFeedStore:
        from shared.adapters.firestore_calendar_feeds import FirestoreCalendarFeedStore

        return FirestoreCalendarFeedStore(self._firestore)

    @cached_property
    def email_notices(self) -> EmailNotices:
        from shared.adapters.chat_notices import ChatNotices
        from shared.services.notify.email import NotifiedEmailProblems

        chat = ChatNotices(self.conversations, self.clock)
        return NotifiedEmailProblems(chat, self.tasks, self.settings, self.clock)

    @cached_property
    def web_search(self) -> WebSearch | None:
        """Gemini grounded in Google Search, or None (``web_search_provider``): the research
        agent then offers no ``web_search``. Another provider plugs in here."""
        s = self.settings
        if s.web_search_provider == "none":
            return None
        from shared.adapters.vertex_client import build_vertex_client
        from shared.adapters.vertex_grounding import VertexGroundedSearch

        model = s.vertex_grounding_model or s.models()["reply"]
        return VertexGroundedSearch(build_vertex_client(s), model)

    def _breaker(self, name: str) -> Any:
        from shared.adapters.breaker import CircuitBreaker

        s = self.settings
        return CircuitBreaker(name, s.breaker_failures, s.breaker_reset_seconds)

    @cached_property
    def _redis(self) -> Any:
        import redis

        timeout = self.settings.redis_timeout_seconds
        return redis.Redis.from_url(
            self.settings.redis_url, socket_timeout=timeout, socket_connect_timeout=timeout
        )

    @cached_property
    def _redis_breaker(self) -> Any:
        """One per instance for every Redis call: an outage costs one timeout, not one per
        request (see ``shared/adapters/breaker.py``)."""
        return self._breaker("redis")

    @cached_property
    def cache(self) -> Cache:
        from shared.adapters.redis_cache import RedisCache

        return RedisCache(self._redis, self.settings.redis_prefix, self._redis_breaker)

    @cached_property
    def rate_limiter(self) -> RateLimiter:
        """Per instance: its fallback bucket counts while Redis is down."""
        from shared.services.rate_limit import RateLimiter, TokenBucket

        per_minute = self.settings.rate_limit_per_minute
        return RateLimiter(self.cache, self.clock, per_minute, TokenBucket(per_minute))

    @cached_property
    def account_conversations(self) -> ConversationArchive:
        from shared.adapters.firestore_account import FirestoreAccountStore

        return FirestoreAccountStore(self._firestore)

    @cached_property
    def account_cache(self) -> UserKeyspace:
        from shared.adapters.redis_account import RedisAccountKeys

        prefix = self.settings.redis_prefix
        return RedisAccountKeys(self._redis, prefix, breaker=self._redis_breaker)

    def close(self) -> None:
        """Close the PostgreSQL connections this instance opened (none if it never did)."""
        database = self.__dict__.get("_database")
        if database is not None:
            database.close()

    @cached_property
    def _database(self) -> Any:
        from shared.adapters.postgres import Database

        return Database(self.settings, breaker=self._breaker("postgres"))

    @cached_property
    def keyring(self) -> KeyRing:
        from shared.adapters.postgres_keyring import PostgresKeyRing

        s = self.settings
        if s.kek_provider == "kms":
            from google.cloud import kms

            from shared.adapters.keyring_kms import KmsKek

            if not s.kms_key_name:
                raise ConfigurationError("kek_provider=kms needs kms_key_name")
            kek: Any = KmsKek(kms.KeyManagementServiceClient(), s.kms_key_name)
        else:
            from shared.adapters.keyring_local import LocalKek

            if not s.local_kek_file:
                raise ConfigurationError("kek_provider=local needs local_kek_file")
            kek = LocalKek(s.local_kek_file)
        return PostgresKeyRing(self._database, kek)

    @cached_property
    def facts(self) -> FactStore:
        from shared.adapters.postgres_facts import PostgresFactStore

        return PostgresFactStore(self._database, self.keyring)

    @cached_property
    def sessions(self) -> SessionMemory:
        from shared.adapters.postgres_sessions import PostgresSessionMemory

        return PostgresSessionMemory(self._database, self.keyring)

    @cached_property
    def fact_expiry(self) -> FactExpiry:
        from shared.adapters.postgres_fact_history import PostgresFactExpiry

        return PostgresFactExpiry(self._database)

    @cached_property
    def reranker(self) -> Reranker:
        if self.settings.reranker == "vertex":
            from shared.adapters.rerankers import VertexReranker

            return VertexReranker(self.settings)
        from shared.adapters.rerankers import IdentityReranker

        return IdentityReranker()

    @cached_property
    def contacts(self) -> ContactStore:
        from shared.adapters.postgres_contacts import PostgresContactStore

        return PostgresContactStore(self._database, self.keyring)

    @cached_property
    def embedding_migration(self) -> EmbeddingMigration:
        from shared.adapters.postgres_reembed import PostgresEmbeddingMigration

        return PostgresEmbeddingMigration(self._database, self.keyring)

    @cached_property
    def executions(self) -> ExecutionMemory:
        from shared.adapters.postgres_executions import PostgresExecutionStore

        return PostgresExecutionStore(self._database, self.keyring)

    @cached_property
    def advisor(self) -> DecompositionAdvisor:
        """The planner's advisor over the user's past executions (``executions``)."""
        from shared.services.history.advisor import HistoryAdvisor

        return HistoryAdvisor(self)

    @cached_property
    def pending(self) -> PendingStore:
        from shared.adapters.postgres_pending import PostgresPendingStore

        return PostgresPendingStore(self._database, self.keyring)

    @cached_property
    def tasks(self) -> TaskQueue:
        from shared.adapters.cloud_tasks import CloudTasksTaskQueue, build_tasks_client

        s = self.settings
        return CloudTasksTaskQueue(
            build_tasks_client(s),
            s.gcp_project,
            s.tasks_location,
            s.tasks_invoker_email,
            breaker=self._breaker("cloud tasks"),
        )

    @cached_property
    def publisher(self) -> Publisher:
        from google.cloud import pubsub_v1

        from shared.adapters.pubsub import PubSubPublisher

        breaker = self._breaker("pub/sub")
        return PubSubPublisher(
            pubsub_v1.PublisherClient(), self.settings.gcp_project, breaker=breaker
        )

    @cached_property
    def _models(self) -> tuple[LLM, Embedder]:
        from shared.deps.models import build_models

        return build_models(self.settings)

    @cached_property
    def llm(self) -> LLM:
        return self._models[0]

    @cached_property
    def embedder(self) -> Embedder:
        return self._models[1]

    @cached_property
    def understanding(self) -> UnderstandingTier | None:
        """The deterministic understanding tier, or None when it is off, or under the tests'
        scripted model (which has no MiniLM: a test passes a tier of its own). Its router
        compares all-MiniLM-L6-v2 vectors: the configured embedder when that is MiniLM
        (``make dev``: the local model service), else MiniLM in this process (production,
        where Gemini embeds the facts). Nothing loads before the first message that is not
        a plain greeting (spaCy, dateparser and the weights load on first use)."""
        settings = self.settings
        if not settings.understanding_tier or settings.model_provider == "scripted":
            return None
        from shared.understanding import UnderstandingTier
        from shared.understanding.router import MODEL

        if self.embedder.model_name == MODEL:
            return UnderstandingTier(self.embedder)
        from shared.adapters.local_embedder import LocalEmbedder

        return UnderstandingTier(LocalEmbedder())

    @property
    def tier_in_process(self) -> bool:
        """Whether the tier runs MiniLM in this process (Gemini embeds the facts), so
        building it reads files and connects nothing: the turn function builds it at start
        (``shared.app.warmup``). Where the model's embedder is MiniLM (``make dev``: the
        local model service), the tier uses it, a network client, and is not warmed."""
        from shared.understanding.router import MODEL

        settings = self.settings
        return (
            settings.understanding_tier
            and settings.model_provider == "vertex"
            and settings.vertex_embedding_model != MODEL
        )

    @cached_property
    def user_tokens(self) -> UserTokenVerifier:
        return UserTokenVerifier(self.settings)

    @cached_property
    def internal_tokens(self) -> InternalTokenVerifier:
        return InternalTokenVerifier(self.settings)


@lru_cache(maxsize=1)
def get_deps() -> Deps:
    from shared.deps.models import log_retired_models
    from shared.logs import configure

    settings = get_settings()
    configure(settings.gcp_project, settings.log_level)
    deps = Deps(settings)
    if settings.model_provider == "vertex":
        log_retired_models(settings, deps.clock.now().date())
    return deps
