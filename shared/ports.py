"""Ports: the interfaces services and the graph depend on.

Each has a real adapter in ``shared/adapters`` and an in-memory fake (``fake_*``) for unit
tests; ``tests/contract`` runs one test file against both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol, TypeVar

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, Field

from shared.model_catalog import ModelKind
from shared.models.agent_data import (
    Budget,
    CalendarEvent,
    Expense,
    Feedback,
    Note,
    OutboundEmail,
    RecordKind,
    RelayAnswer,
    Reminder,
    SentMessage,
    WebFindings,
)
from shared.models.base import Strict
from shared.models.calendar_feed import FeedGrant
from shared.models.domain import (
    AssistantProfile,
    Chat,
    ChatUpdate,
    Handoff,
    HitlControl,
    Message,
    TurnClaim,
    TurnMetadata,
    TurnRecord,
)
from shared.models.history import (
    Execution,
    ExecutionDraft,
    HistoryQuery,
    StrategyFeedback,
)
from shared.models.jobs import JobState
from shared.models.memory import (
    ExpiredFacts,
    ExtractionChanges,
    Fact,
    FactDraft,
    FactFilter,
    PendingItem,
    Person,
    RecallQuery,
    ScoredFact,
    SemanticQuery,
    SessionNote,
    StaleFact,
    TaskStatus,
    TemporalQuery,
)
from shared.models.memory_api import ConversationExport
from shared.models.notifications import Device, Notification, NotificationSettings
from shared.models.notify_api import NewReminder
from shared.models.trust import HitlMode, TrustRecord
from shared.models.wire import Interrupt, MultitaskStrategy, TurnResponse

M = TypeVar("M", bound=BaseModel)
# A stored vector as retrieval reads it back (for diversity): numpy, never a list of floats.
Embedding = npt.NDArray[np.float32]
R = TypeVar("R")
# A list's position: the ``(time, id)`` of the last item a page gave (keyset paging).
Keyset = tuple[datetime, str]


@dataclass(frozen=True)
class MessagePage:
    """Which messages of a chat a page holds: ``limit`` of them in ``(created_at, id)``
    order (newest first with ``newest_first``), created after ``since`` if given, past
    ``after`` (the position of the previous page's last message)."""

    limit: int
    since: datetime | None = None
    after: Keyset | None = None
    newest_first: bool = False


class Clock(Protocol):
    def now(self) -> datetime: ...


class ConversationStore(Protocol):
    """Chats, messages and per-turn idempotency records (Firestore)."""

    def get_chat(self, user_id: str, chat_id: str) -> Chat | None: ...

    def create_chat(self, user_id: str, chat_id: str, now: datetime, title: str = "") -> Chat:
        """Create the chat, or answer the one already stored under this id (a retry)."""
        ...

    def retitle(
        self, user_id: str, chat_id: str, title: str, check: Callable[[Chat], None]
    ) -> Chat | None:
        """Set the chat's title in one transaction, after ``check`` accepted the chat as read
        (it raises to refuse: nothing is written); None when there is no such chat."""
        ...

    def recent_messages(
        self, user_id: str, chat_id: str, limit: int, after: datetime | None = None
    ) -> list[Message]:
        """The newest ``limit`` messages created after ``after``, oldest first."""
        ...

    def list_chats(self, user_id: str, limit: int, after: Keyset | None = None) -> list[Chat]:
        """The user's ``limit`` most recently updated chats, most recent first (by
        ``(updated_at, id)`` descending); ``after``: only those past that position."""
        ...

    def list_messages(self, user_id: str, chat_id: str, page: MessagePage) -> list[Message]:
        """One page of the chat's messages in ``(created_at, id)`` order (``page``)."""
        ...

    def claim_turn(
        self,
        user_id: str,
        client_message_id: str,
        chat_id: str,
        turn_id: str,
        now: datetime,
        lease_seconds: int,
        new_chat: bool = True,
        resume: ResumeClaim | None = None,
        owner: str = "",
        strategy: MultitaskStrategy = "enqueue",
        wait_seconds: float = 30.0,
    ) -> TurnClaim:
        """Atomically start a turn, or report the earlier one with the same client id.

        In the same transaction the chat is read (``no_chat`` if it must exist and does
        not) and, with ``resume``, its waiting interrupt is claimed for this turn; a chat
        held by another turn makes it wait (``queued``, for ``wait_seconds`` at most) or
        refuses it (``busy``), by ``strategy``. ``owner`` names the request: claiming again
        after waiting continues its own queued claim (see
        ``shared.adapters.turn_claims.decide``, shared by every adapter)."""
        ...

    def open_interrupt(
        self, user_id: str, chat_id: str, control: HitlControl, question: Message, now: datetime
    ) -> bool:
        """Make ``control`` the chat's pending interrupt and post its question, in one
        transaction; False (nothing written) if another interrupt is waiting."""
        ...

    def put_control(self, user_id: str, chat_id: str, control: HitlControl) -> bool:
        """Make ``control`` the chat's control record (one write, no read): how a turn that
        asked leaves its question pending, once its checkpoint is saved. False if the chat
        is gone."""
        ...

    def complete_turn(
        self,
        user_id: str,
        client_message_id: str,
        messages: Sequence[Message],
        response: TurnResponse,
        now: datetime,
        new_chat: bool = False,
        metadata: TurnMetadata | None = None,
        chat_update: ChatUpdate | None = None,
        outbox: Sequence[Handoff] = (),
        finish: bool = False,
    ) -> None:
        """Write the turn's messages, its recorded response and metadata, and the chat's
        update (or creation, for ``new_chat``) in one commit. ``outbox``: handoffs a queue
        could not take, kept on the turn record (the turn joins ``Chat.outbox``) until
        ``settle_outbox``. ``finish``: the run ends with this commit (``finish_turn`` in
        it). Raises ``Conflict`` when the turn record is gone (an erased account)."""
        ...

    def finish_turn(
        self,
        user_id: str,
        client_message_id: str,
        chat_id: str,
        control: HitlControl | None = None,
        release_chat: bool = True,
    ) -> None:
        """The run has ended, its checkpoint saved: the turn's lease and (unless it lost
        it) the chat are released, with ``control`` (a question left waiting) stored, in
        one commit. Nothing happens for an erased account."""
        ...

    def beat(
        self,
        user_id: str,
        client_message_id: str,
        chat_id: str,
        owner: str,
        lease_until: datetime | None = None,
    ) -> Beat:
        """While a turn runs: ``stop`` when an interrupting turn asks it to, ``lost`` when
        another turn holds its chat (its lease ran out), ``gone`` when its record is gone,
        else ``go``. With ``lease_until``, its lease and the chat's move on to it."""
        ...

    def leave_queue(
        self, user_id: str, client_message_id: str, chat_id: str, owner: str, now: datetime
    ) -> None:
        """A queued turn stops waiting: out of its chat's queue, its record failed (so the
        client may send it again)."""
        ...

    def outbox(self, user_id: str, client_message_id: str) -> list[Handoff]:
        """The handoffs the turn still has to send (none for an unknown turn)."""
        ...

    def settle_outbox(
        self, user_id: str, chat_id: str, client_message_id: str, remaining: Sequence[Handoff]
    ) -> None:
        """Keep only ``remaining`` in the turn's outbox; with none left the turn leaves its
        chat's outbox."""
        ...

    def turns_with_outbox(self, limit: int) -> list[OutboxEntry]:
        """Turns of any user whose outbox holds handoffs (the scheduled drain reads them)."""
        ...

    def get_turn(self, user_id: str, client_message_id: str) -> TurnRecord | None: ...

    def release_turn(
        self,
        user_id: str,
        client_message_id: str,
        chat_id: str | None = None,
        owner: str | None = None,
    ) -> None:
        """Forget a failed turn so the client may retry it with the same id (a completed
        one stays completed); the chat it held (``chat_id``, ``owner``) is free again."""
        ...

    def append_message(self, user_id: str, chat_id: str, message: Message) -> bool:
        """Add a message whose id is its idempotency key; False if it already existed."""
        ...


Beat = Literal["go", "stop", "lost", "gone"]


@dataclass(frozen=True)
class OutboxEntry:
    user_id: str
    chat_id: str
    client_message_id: str


@dataclass(frozen=True)
class ResumeClaim:
    """Take the chat's waiting interrupt together with the turn's claim.

    ``interrupt_id``: exactly this interrupt (``functions/resume``), else ``not_pending``;
    None: whatever question waits (a message that may answer it; none is no error): a
    question of the turn graph always, one of background work if ``choose`` picks an option.
    ``choose`` picks the answer's option from the interrupt, inside the transaction; None
    from it means the answer picks nothing (``bad_answer``, nothing written)."""

    interrupt_id: str | None = None
    choose: Callable[[Interrupt], str | None] | None = None


class ProfileStore(Protocol):
    """The user's assistant settings (persona, presentation rules, time zone)."""

    def get_profile(self, user_id: str) -> AssistantProfile:
        """The stored profile, or the defaults when the user never set one."""
        ...

    def put_profile(self, user_id: str, profile: AssistantProfile, now: datetime) -> None: ...


class TrustStore(Protocol):
    """The user's human-in-the-loop trust record: level, task counters, pinned mode."""

    def get(self, user_id: str) -> TrustRecord:
        """The stored record, or the defaults (a novice, nothing counted) when absent."""
        ...

    def update(
        self, user_id: str, change: Callable[[TrustRecord], TrustRecord], now: datetime
    ) -> TrustRecord:
        """Store ``change(current)`` with ``updated_at=now`` atomically and return it:
        concurrent updates are serialised, none is lost. ``change`` may run more than once
        (re-applied to the newer record after losing a race), so it must be pure."""
        ...

    def put_settings(
        self, user_id: str, pinned_mode: HitlMode | None, now: datetime
    ) -> TrustRecord:
        """Pin a mode (None: follow the level again), counters untouched; the stored record."""
        ...

    def fenced(self, since: datetime) -> TrustStore:
        """The same store for work created at ``since`` (an agent job): its writes are
        refused with ``AccountErased`` (nothing written) while the account is erased and
        once an erasure finished after ``since``."""
        ...


class IdempotencyStore(Protocol):
    def claim(self, key: str, now: datetime, ttl_seconds: int) -> bool:
        """True for the first caller of ``key``; False for every later one."""
        ...

    def release(self, key: str) -> None:
        """Give up a claim whose work failed transiently, so a redelivery may retry it."""
        ...


class Cache(Protocol):
    def get(self, key: str) -> bytes | None: ...

    def set(self, key: str, value: bytes, ttl_seconds: int) -> None: ...

    def delete(self, *keys: str) -> None: ...

    def hit(self, key: str, window_seconds: int) -> int:
        """Count one event in a fixed window and return the count so far."""
        ...


class FactStore(Protocol):
    """Facts (bi-temporal: superseded facts are closed, not deleted). Every call is scoped
    to ``user_id``: no call can read or change another user's rows."""

    def apply_extraction(
        self,
        task_key: str,
        user_id: str,
        changes: ExtractionChanges,
        now: datetime,
        issued_at: datetime | None = None,
    ) -> bool:
        """Apply one extraction task in one transaction; False (and no write) if done before,
        or if the account was erased after ``issued_at`` (when the work was queued)."""
        ...

    def task_status(self, user_id: str, task_key: str) -> TaskStatus:
        """Whether the task was applied, and when the account was last erased (if ever)."""
        ...

    def current_facts(self, user_id: str, subject_ids: Sequence[str | None]) -> list[Fact]:
        """Current facts about these subjects (None: the user), for conflict detection."""
        ...

    def nearest(
        self, user_id: str, embedding: Sequence[float], embedding_model: str, limit: int
    ) -> list[ScoredFact]:
        """Exact cosine nearest current facts of the same embedding model (deduplication)."""
        ...

    def search(self, user_id: str, query: SemanticQuery, now: datetime) -> list[ScoredFact]:
        """Approximate (HNSW) semantic search with boost, privacy filter, threshold, decay."""
        ...

    def in_window(self, user_id: str, query: TemporalQuery) -> list[Fact]:
        """Current facts whose time anchor (or, with ``stated``, whose first statement)
        falls in [start, end)."""
        ...

    def recall(self, user_id: str, query: RecallQuery, now: datetime) -> list[RecallCandidate]:
        """The hybrid retrieval's candidates: the dense channel's nearest (HNSW; scored like
        ``search``, no threshold) and the keyword channel's best (BM25 over the blind index),
        of the facts valid and unexpired at ``query.as_of`` (default: now)."""
        ...

    def facts_by_id(self, user_id: str, fact_ids: Sequence[str]) -> list[Fact]:
        """The user's facts of these ids, in that order (others' and unknown ids left out)."""
        ...

    def versions(self, user_id: str, fact_id: str) -> list[Fact]:
        """Every version of the fact (of any of its versions), the latest first."""
        ...

    def restore_version(self, user_id: str, version_id: str, now: datetime) -> Fact | None:
        """Make an earlier version current again (a new version superseding the latest);
        None if it is not the user's. Repeating it changes nothing."""
        ...

    def list_facts(self, user_id: str, where: FactFilter) -> list[Fact]: ...

    def get_fact(self, user_id: str, fact_id: str) -> Fact | None: ...

    def correct_fact(
        self, user_id: str, fact_id: str, replacement: FactDraft, now: datetime
    ) -> Fact | None:
        """The user's correction: supersede the fact with ``replacement``; None if not theirs."""
        ...

    def delete_fact(self, user_id: str, fact_id: str) -> bool:
        """Erase a fact and its history for good (the user's right to erasure)."""
        ...

    def reassign_facts(self, user_id: str, fact_ids: Sequence[str], person_id: str) -> int:
        """Move facts to another of the user's persons (merge, split); returns how many."""
        ...

    def delete_user(self, user_id: str, now: datetime) -> None:
        """Erase every fact, person, pending item, processed key and data key of the user,
        and remember ``now`` as the erasure (``task_status``): work queued until then stores
        nothing. Waits for every ``hold_user`` block of the user to end."""
        ...

    def hold_user(self, user_id: str) -> AbstractContextManager[None]:
        """Hold the user for a piece of work (an extraction): an erasure of the user waits
        until the block ended; work that checks ``task_status`` inside the block sees any
        erasure that finished before it. Holders of one user run one at a time, so a person
        one extraction creates is found by the next, not created twice."""
        ...


@dataclass(frozen=True)
class RecallCandidate:
    """A fact a channel of the hybrid retrieval found, with what each said of it; the fact
    itself is read (decrypted) only if it makes the final list.

    ``dense_score``: the dense channel's score (similarity, recency decay, entity boost), or
    None if the fact was not among its nearest; ``keyword_score``: BM25 over the blind index,
    or None if it matched none of the query's rarer terms; ``in_window``: found by the
    temporal channel (about, or first stated in, the query's window). ``embedding`` is for
    diversity. ``read`` decrypts the fact from what the store already fetched with the
    candidate (no second round trip); None: read it with ``FactStore.facts_by_id``."""

    fact_id: str
    similarity: float
    dense_score: float | None
    keyword_score: float | None
    embedding: Embedding
    in_window: bool = False
    read: Callable[[], Fact] | None = None


@dataclass(frozen=True)
class SessionCandidate:
    note: SessionNote
    similarity: float
    embedding: Embedding


class FactExpiry(Protocol):
    """The scheduled expiry job's store (all users): facts whose durability ran out."""

    def expire_due(self, now: datetime, limit: int) -> ExpiredFacts: ...


class SessionMemory(Protocol):
    """Chats' running summaries, embedded per session: memory no fact captured."""

    def put_summary(
        self, user_id: str, note: SessionNote, embedding: Sequence[float], model: str
    ) -> bool:
        """Store or replace the chat's summary; False (and no change) if the stored one
        already covers later messages (a late or repeated task)."""
        ...

    def recall_sessions(
        self, user_id: str, query: RecallQuery, window: tuple[datetime, datetime] | None
    ) -> list[SessionCandidate]:
        """The user's sessions nearest the query (overlapping ``window`` if given)."""
        ...


class Reranker(Protocol):
    """Orders candidate texts by how well each answers the query (Vertex AI ranking API in
    production; identity locally)."""

    name: str
    reads_texts: bool  # False: the identity, which needs no text read for it

    def rerank(self, query: str, texts: Sequence[str]) -> list[int]:
        """The indices of ``texts``, best first (every index once)."""
        ...


class EmbeddingMigration(Protocol):
    """Facts of every user whose vector is of another model; an operator's batch job."""

    def stale(self, embedding_model: str, limit: int) -> list[StaleFact]: ...

    def replace_embeddings(
        self, updates: Sequence[tuple[StaleFact, list[float]]], embedding_model: str
    ) -> int:
        """Write new vectors in one transaction; facts migrated meanwhile are left alone."""
        ...


class ContactStore(Protocol):
    """The persons a user mentions. Names are found by a keyed hash, never stored in clear."""

    def list_persons(self, user_id: str) -> list[Person]: ...

    def get_person(self, user_id: str, person_id: str) -> Person | None: ...

    def find_by_name(self, user_id: str, name: str) -> list[Person]:
        """Persons whose display name or an alias equals ``name`` after normalisation."""
        ...

    def add_person(self, person: Person) -> None:
        """Idempotent on ``person.id``."""
        ...

    def update_person(self, person: Person, unchanged_since: datetime | None = None) -> bool:
        """Rename, change role, aliases or descriptors; False if not the user's person, or
        (compare-and-set) if ``unchanged_since`` is given and the stored ``updated_at``
        differs from it: someone changed the person since it was read."""
        ...

    def merge_persons(self, user_id: str, keep_id: str, absorb_id: str) -> bool:
        """Move ``absorb_id``'s facts and names to ``keep_id`` and delete it, atomically."""
        ...

    def delete_person(self, user_id: str, person_id: str) -> bool:
        """Delete the person and every fact about them."""
        ...


class PendingStore(Protocol):
    """Facts held back for the user's answer (created through ``apply_extraction``)."""

    def list_pending(self, user_id: str, chat_id: str | None = None) -> list[PendingItem]: ...

    def get_pending(self, user_id: str, item_id: str) -> PendingItem | None: ...

    def resolve_pending(self, user_id: str, item_id: str, now: datetime) -> PendingItem | None:
        """Mark resolved exactly once: the first caller gets the item, later ones None."""
        ...


class ConversationArchive(Protocol):
    """Everything Firestore holds under ``users/{uid}``: chats, messages, turns, settings,
    the agents' records (``AgentDataStore``) and sent messages (``Outbox``)."""

    def export_user(self, user_id: str) -> ConversationExport: ...

    def delete_user(self, user_id: str) -> int:
        """Delete ``users/{uid}`` and every document below it; idempotent. Returns how many
        documents were deleted. Raises ``DependencyUnavailable`` if anything is left."""
        ...

    def begin_erasure(self, user_id: str, now: datetime) -> None:
        """Mark the account as being erased: from now on its turns are refused and its
        agent jobs write nothing (``shared.adapters.firestore_erasure``)."""
        ...

    def running_turns(self, user_id: str, now: datetime) -> int:
        """How many of the user's turns still run (a live lease): the erasure waits."""
        ...

    def end_erasure(self, user_id: str, now: datetime) -> None:
        """The erasure finished at ``now``: work created before it stays refused."""
        ...


class UserKeyspace(Protocol):
    """The user's Redis keys (``<prefix>:<kind>:<uid>[:<rest>]``): rate buckets, caches."""

    def delete_user(self, user_id: str) -> int:
        """Delete every key of this user and no other user's; idempotent."""
        ...


class UserCipher(Protocol):
    """One user's data key: authenticated encryption and a keyed hash for lookups."""

    def encrypt(self, plaintext: str, context: str) -> bytes:
        """``context`` (e.g. "facts.text") is bound as associated data: a ciphertext moved
        to another column or user does not decrypt."""
        ...

    def decrypt(self, ciphertext: bytes, context: str) -> str: ...

    def term_hashes(self, terms: Sequence[str]) -> list[int]:
        """Keyed 64-bit hashes of keyword terms: the blind index (``shared.crypto``)."""
        ...

    def name_hash(self, name: str) -> bytes:
        """Keyed hash of the normalised name (case, accents, spacing folded)."""
        ...


class KeyRing(Protocol):
    """Per-user data keys, wrapped by a key-encryption key (Cloud KMS or a local key file)."""

    def cipher_for(self, user_id: str) -> UserCipher:
        """The user's cipher, creating and storing their wrapped data key on first use."""
        ...

    def forget(self, user_id: str) -> None:
        """Destroy the user's data key: whatever ciphertext is left can never be read."""
        ...


class QueuedTask(Strict):
    queue: str
    url: str
    name: str  # Cloud Tasks deduplicates by name
    body: bytes
    schedule_time: datetime | None = None
    headers: dict[str, str] = Field(
        default_factory=dict
    )  # e.g. the request's trace, so the task's logs join it


class TaskQueue(Protocol):
    def enqueue(self, task: QueuedTask) -> bool:
        """Create the task; False when a task of that name already exists."""
        ...


class Publisher(Protocol):
    def publish(self, topic: str, data: bytes, attributes: dict[str, str]) -> str:
        """Publish and return the message id."""
        ...


class ChatTurn(Strict):
    role: Literal["user", "assistant"]
    text: str


class LLMRequest(Strict):
    system: str = ""
    messages: list[ChatTurn]
    max_output_tokens: int = 512
    temperature: float = 0.2
    # Vertex request labels: which work the call does (shared.services.model_work)
    labels: dict[str, str] = Field(default_factory=dict)
    kind: ModelKind = "reply"  # which configured model answers (shared.model_catalog)


class Usage(Strict):
    input_tokens: int = 0
    output_tokens: int = 0  # thought tokens included: they are billed as output
    thought_tokens: int = 0  # Vertex usageMetadata.thoughtsTokenCount
    search_queries: int = 0  # grounded web search queries, billed apart from tokens


class Generation(Strict):
    text: str
    usage: Usage


class StreamChunk(Strict):
    text: str = ""
    usage: Usage | None = None  # set on the last chunk


class LLM(Protocol):
    name: str

    def generate(self, request: LLMRequest) -> Generation: ...

    def stream(self, request: LLMRequest) -> Iterator[StreamChunk]: ...

    def structured(self, request: LLMRequest, schema: type[M]) -> tuple[M, Usage]:
        """Reply constrained to ``schema``; raises ModelOutputInvalid when it does not validate."""
        ...


# What a text is embedded for: stored (a fact) or searched with (a query). Gemini embeds the
# two sides differently; a model without task types ignores it.
EmbedTask = Literal["RETRIEVAL_DOCUMENT", "RETRIEVAL_QUERY"]


class Embedder(Protocol):
    model_name: str
    dimension: int

    def embed(
        self, texts: Sequence[str], task: EmbedTask = "RETRIEVAL_DOCUMENT"
    ) -> list[list[float]]:
        """Unit-length vectors, one per text."""
        ...


@dataclass(frozen=True)
class DueReminder:
    user_id: str
    reminder: Reminder


# A delivery's decision, inside the reminder's transaction: the reminder as it is after
# ringing and the notification to write with it, or None: this delivery rings nothing.
Ring = Callable[[Reminder], tuple[Reminder, Notification] | None]


class ReminderStore(Protocol):
    """The reminders that ring (the same records as ``AgentDataStore``'s), their changes
    one transaction each, and what the delivery sweep needs."""

    def create(self, user_id: str, reminder: Reminder) -> tuple[Reminder, bool]:
        """Store it unless its id exists; (the stored one, whether it was created)."""
        ...

    def get(self, user_id: str, reminder_id: str) -> Reminder | None: ...

    def list_open(self, user_id: str, limit: int, after: Keyset | None = None) -> list[Reminder]:
        """Pending and fired ones by ``(due_at, id)``, earliest first."""
        ...

    def list_done(self, user_id: str, limit: int, after: Keyset | None = None) -> list[Reminder]:
        """Done ones by ``(completed_at, id)``, latest first."""
        ...

    def change(
        self, user_id: str, reminder_id: str, change: Callable[[Reminder], Reminder]
    ) -> Reminder | None:
        """Store ``change(current)`` in one transaction (it may raise to refuse: nothing is
        written; an equal result writes nothing); None when there is no such reminder."""
        ...

    def fire(
        self, user_id: str, reminder_id: str, ring: Ring
    ) -> tuple[Reminder, Notification] | None:
        """Apply ``ring`` in one transaction and write its reminder and its notification (the
        inbox) in the same commit; None when there is no such reminder or ``ring`` said no."""
        ...

    def mark_queued(self, user_id: str, reminder_id: str, version: int) -> None:
        """A delivery task holds this version now (the sweep skips it); no-op for another."""
        ...

    def unqueued(self, before: datetime, limit: int) -> list[DueReminder]:
        """Pending reminders of any user due before ``before`` that no task holds yet."""
        ...


class ReminderBook(Protocol):
    """Reminders as the assistant sets them: validated, stored and scheduled at once."""

    def add(self, user_id: str, reminder_id: str, new: NewReminder) -> Reminder:
        """Refused with a ``BadRequest`` code when it cannot ring; a replay of the same id
        answers the stored one."""
        ...

    def listed(self, user_id: str, limit: int, include_done: bool = False) -> list[Reminder]:
        """Open ones by due time (and, with ``include_done``, the done ones too)."""
        ...

    def complete(self, user_id: str, reminder_id: str) -> Reminder | None: ...


class NotificationStore(Protocol):
    """The user's inbox, push devices and notification preferences."""

    def add(self, user_id: str, notification: Notification) -> bool:
        """Write it unless its id exists (a redelivery); whether it was new."""
        ...

    def get(self, user_id: str, notification_id: str) -> Notification | None: ...

    def list_inbox(
        self, user_id: str, limit: int, after: Keyset | None = None, unread_only: bool = False
    ) -> list[Notification]:
        """Newest first by ``(created_at, id)``."""
        ...

    def mark_read(self, user_id: str, notification_id: str) -> Notification | None: ...

    def mark_all_read(self, user_id: str) -> int: ...

    def delete(self, user_id: str, notification_id: str) -> bool: ...

    def clear(self, user_id: str) -> int: ...

    def claim_push(self, user_id: str, notification_id: str, now: datetime, lease: float) -> bool:
        """True for the one delivery that sends its pushes (until ``settle_push``, or until
        the lease runs out for a delivery that died on the way)."""
        ...

    def settle_push(self, user_id: str, notification_id: str, now: datetime) -> None: ...

    def release_push(self, user_id: str, notification_id: str) -> None: ...

    def add_device(self, user_id: str, device: Device) -> Device:
        """Register it; the same id again answers the first registration."""
        ...

    def list_devices(
        self, user_id: str, limit: int, after: Keyset | None = None
    ) -> list[Device]: ...

    def remove_device(self, user_id: str, device_id: str) -> bool: ...

    def get_settings(self, user_id: str) -> NotificationSettings: ...

    def put_settings(self, user_id: str, settings: NotificationSettings) -> None: ...


PushOutcome = Literal["sent", "gone", "failed"]


class PushChannel(Protocol):
    """One push service (Web Push, FCM). ``send`` answers ``gone`` when the service says
    the device is no longer registered (it is then pruned), ``failed`` for a permanent
    refusal of this message; a transient failure raises ``DependencyUnavailable``."""

    @property
    def kind(self) -> str: ...

    def send(self, device: Device, notification: Notification) -> PushOutcome: ...

    def check(self, device: Device) -> None:
        """Refuse (``InvalidDevice``) a registration this service would not deliver to."""
        ...


class AgentDataStore(Protocol):
    """What the domain agents keep for a user: reminders, calendar events, notes, budgets,
    expenses and feedback. Every call is scoped to ``user_id``. ``put_*`` creates or
    replaces the record of that id (the tools derive ids from the job, so a replayed call
    writes the same record); every list and search takes a ``limit`` of 1..``MAX_PAGE``
    (ValueError otherwise) and never returns more."""

    def put_reminder(self, user_id: str, reminder: Reminder) -> None: ...

    def get_reminder(self, user_id: str, reminder_id: str) -> Reminder | None: ...

    def list_reminders(
        self, user_id: str, limit: int, include_done: bool = False
    ) -> list[Reminder]:
        """By ``due_at``, earliest first; open ones only unless ``include_done``."""
        ...

    def complete_reminder(self, user_id: str, reminder_id: str, now: datetime) -> Reminder | None:
        """Mark done (once: a repeat returns it with the first ``completed_at``); None if
        the user has no such reminder."""
        ...

    def put_event(self, user_id: str, event: CalendarEvent) -> None: ...

    def list_events(
        self, user_id: str, start: datetime, end: datetime, limit: int
    ) -> list[CalendarEvent]:
        """Events starting in [start, end), earliest first."""
        ...

    def put_note(self, user_id: str, note: Note) -> None: ...

    def search_notes(self, user_id: str, query: str, limit: int) -> list[Note]:
        """Notes whose title or text contains every word of ``query`` (case folded), newest
        first, among the user's newest ``NOTE_SCAN`` notes."""
        ...

    def put_budget(self, user_id: str, budget: Budget) -> None:
        """One budget per category: replaces the category's earlier one."""
        ...

    def get_budget(self, user_id: str, category: str) -> Budget | None: ...

    def list_budgets(self, user_id: str, limit: int) -> list[Budget]:
        """By category name."""
        ...

    def put_expense(self, user_id: str, expense: Expense) -> None: ...

    def list_expenses(
        self, user_id: str, start: datetime, end: datetime, limit: int
    ) -> list[Expense]:
        """Expenses spent in [start, end), earliest first."""
        ...

    def put_feedback(self, user_id: str, feedback: Feedback) -> None: ...

    def list_feedback(self, user_id: str, limit: int) -> list[Feedback]:
        """Newest first."""
        ...

    def list_notes(self, user_id: str, limit: int) -> list[Note]:
        """The newest notes, newest first."""
        ...

    def get_note(self, user_id: str, note_id: str) -> Note | None: ...

    def get_event(self, user_id: str, event_id: str) -> CalendarEvent | None: ...

    def delete_record(self, user_id: str, kind: RecordKind, record_id: str) -> bool:
        """Delete the user's event, note or expense of that id; False when there was none."""
        ...

    def fenced(self, since: datetime) -> AgentDataStore:
        """The same store for work created at ``since`` (an agent job): its writes are
        refused with ``AccountErased`` (nothing written) while the account is erased and
        once an erasure finished after ``since``."""
        ...


class Mailer(Protocol):
    """A mail relay (SMTP on 587 with STARTTLS in production, the local stack's SMTP server
    in dev and test). One call hands one message over once; it never retries."""

    @property
    def domain(self) -> str:
        """The sender address's domain: Message-IDs are made in it."""
        ...

    def deliver(self, message: OutboundEmail, message_id: str) -> RelayAnswer:
        """Never raises for what the relay does: a refusal or an unreachable relay is
        ``failed`` (nothing went out), no answer after the data went out is ``unknown``."""
        ...


class CalendarFeedStore(Protocol):
    """Each user's calendar feed grant (``shared.models.calendar_feed``), and the lookup of
    a feed URL's token digest to its owner."""

    def get_feed(self, user_id: str) -> FeedGrant | None: ...

    def put_feed(self, user_id: str, grant: FeedGrant) -> FeedGrant:
        """Store ``grant`` unless the user has one (then return that one, unchanged):
        enabling twice (a double click) issues one URL."""
        ...

    def replace_feed(self, user_id: str, grant: FeedGrant) -> FeedGrant:
        """Store ``grant`` in place of any other: the earlier URL stops at once."""
        ...

    def delete_feed(self, user_id: str) -> None:
        """Turn the feed off; its URL stops at once. Nothing to delete is no error."""
        ...

    def feed_owner(self, digest: str) -> str | None:
        """The user whose current grant has this token digest, else None (unknown, revoked,
        rotated, or the account erased)."""
        ...


class EmailNotices(Protocol):
    """Tells the user that a message sent for them failed or may not have gone out: a
    message in the job's chat (``shared.adapters.chat_notices``) and a notification of kind
    ``email_failed`` (``shared.services.notify.email``). Idempotent per record."""

    def email_failed(self, user_id: str, chat_id: str, record: SentMessage) -> None: ...


class Outbox(Protocol):
    """Messages sent on the user's behalf (the agents' sensitive ``email_send``)."""

    def send(self, user_id: str, message: OutboundEmail, idempotency_key: str) -> SentMessage:
        """Send once per (user, key): a later send with the same key, concurrent or not,
        sends nothing and returns the first record, whatever its message (and whatever its
        status: a ``pending`` one of a run that died mid-send is never sent again). With a
        ``Mailer`` the record is written ``pending`` first, then settled with the relay's
        answer; without one, recording is the delivery (``sent`` at once)."""
        ...

    def get_sent(self, user_id: str, idempotency_key: str) -> SentMessage | None: ...

    def fenced(self, since: datetime) -> Outbox:
        """The same store for work created at ``since`` (an agent job): its writes are
        refused with ``AccountErased`` (nothing written) while the account is erased and
        once an erasure finished after ``since``."""
        ...


class WebSearch(Protocol):
    """A web search provider for the research agent (Gemini grounded in Google Search in
    production, ``shared.adapters.vertex_grounding``; another provider fits the same
    shape). None configured: the ``web_search`` tool is not offered."""

    def search(self, query: str, limit: int) -> WebFindings:
        """At most ``limit`` sources. ``WebSearchUnavailable`` when this deployment cannot
        reach the web (the local model service), so the agent says so."""
        ...


class JobStore(Protocol):
    """Agent job documents (``shared.models.jobs``), one per job under its user."""

    def get(self, user_id: str, job_id: str) -> JobState | None: ...

    def list_jobs(self, user_id: str, limit: int, after: Keyset | None = None) -> list[JobState]:
        """The user's ``limit`` most recently updated jobs (finished ones until their TTL),
        by ``(updated_at, job_id)`` descending; ``after``: only those past that position."""
        ...

    def update(
        self,
        user_id: str,
        job_id: str,
        change: Callable[[JobState | None], tuple[R, JobState | None]],
    ) -> R:
        """Read the job and write what ``change`` returns (None: write nothing) in one
        transaction; return ``change``'s result. ``change`` may run more than once (a
        contended transaction is retried), so it must not act outside its return value."""
        ...


class OperatorAlerts(Protocol):
    """The operators' channel (a webhook) for what a person must look at."""

    def alert(self, event: str, payload: dict[str, Any]) -> bool:
        """Deliver once, best effort: False (logged) when no channel is set or it failed."""
        ...


class ExecutionMemory(Protocol):
    """The supervisor's memory of finished jobs, per user (``shared.models.history``).

    Rows past their ``expires_at`` are invisible to every read and are purged as new ones
    are written. Account erasure removes everything (``forget_all``, and the data key)."""

    def record(self, draft: ExecutionDraft, issued_at: datetime) -> bool:
        """Store one job's execution, with a ``rejected_step`` feedback per refused
        interrupt, once: False (nothing written) when the job was recorded before, or the
        user erased the account at or after ``issued_at`` (when the job was made)."""
        ...

    def related(self, user_id: str, query: HistoryQuery, now: datetime) -> list[Execution]:
        """Every live run of the strategies of the ``query.limit`` runs nearest to the
        query, each with its ``similarity`` (cosine) and its strategy's ``penalties``;
        nearest first."""
        ...

    def add_feedback(self, feedback: StrategyFeedback) -> bool:
        """Count the user's word against a strategy once per key; False if the key was
        counted already or the job named has no recorded execution."""
        ...

    def list_executions(self, user_id: str, now: datetime, limit: int) -> list[Execution]:
        """The user's live executions, newest first, at most ``limit`` (1..1000)."""
        ...

    def forget_strategy(self, user_id: str, strategy_id: str) -> int:
        """Delete the strategy's runs and feedback; how many runs were deleted."""
        ...

    def forget_all(self, user_id: str) -> int:
        """Delete every run and feedback of the user; how many runs were deleted."""
        ...
