"""The fact system's records: persons, facts (bi-temporal), pending items, queries.

Plaintext lives only in these models, in memory; the PostgreSQL adapters encrypt text and
names with the user's data key before anything reaches the database.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import AwareDatetime, Field

from shared.models.base import Strict

# Family beyond the core has roles of its own: "my grandmother Rosa" is family,
# not "other"; a step-relation is the role it stands in ("stepmother": parent).
PersonRole = Literal[
    "partner", "child", "parent", "sibling", "grandparent", "grandchild", "aunt_uncle",
    "cousin", "niece_nephew", "in_law", "friend", "colleague", "pet", "service_provider",
    "other",
]  # fmt: skip
# Roles held through someone else by nature ("my sister's son" is a nephew): said with
# another person's relation ("Anna's son"), they stay what they are, unlike "my wife's
# colleague", who is not the user's colleague.
THROUGH_OTHERS: frozenset[PersonRole] = frozenset(
    {"grandparent", "grandchild", "aunt_uncle", "cousin", "niece_nephew", "in_law"}
)
FactType = Literal[
    "Schedule", "Travel", "Health", "Allergy", "Medical", "Relationship",
    "Work", "Hobby", "Preference", "Contact", "Other",
]  # fmt: skip
Sensitivity = Literal["low", "medium", "high"]
Durability = Literal["durable", "long", "medium", "short"]
Scope = Literal["avatar", "workspace"]
PendingKind = Literal["disambiguation", "fact_conflict"]

EndedBy = Literal["superseded", "expired"]

SENSITIVE_TYPES: frozenset[str] = frozenset({"Allergy", "Medical", "Health"})
# How long a fact of each durability stays in retrieval after it was last seen (or after the
# moment it is about, if later): short = days, medium = weeks, long = months. Durable: always.
# 0004_retrieval.sql backfilled existing rows with the same numbers.
LIFETIME_DAYS: dict[str, int] = {"short": 7, "medium": 42, "long": 182}
CRITICAL_MIN_CONFIDENCE = 0.9
SELF = "self"  # relation_to_user of a fact about the user themself


class Person(Strict):
    id: str  # uuid
    user_id: str
    avatar_id: str | None = None
    display_name: str = Field(min_length=1, max_length=120)
    role_to_user: PersonRole = "other"
    aliases: list[str] = Field(default_factory=list)
    # Facts about the person that tell two people of one name apart ("age": "8",
    # "employer": "ACME", "city": "Bern"): the red-flag check compares them.
    descriptors: dict[str, str] = Field(default_factory=dict)
    created_at: datetime | None = None
    updated_at: datetime | None = None


class Source(Strict):
    chat_id: str | None = None
    turn_id: str | None = None
    message_id: str | None = None


class FactDraft(Strict):
    """A fact ready to store: attributed, embedded, keyed for idempotency."""

    text: str = Field(min_length=1, max_length=200)
    type: FactType = "Other"
    subject_entity_id: str | None = None  # None: about the user (relation_to_user == SELF)
    relation_to_user: str = SELF
    confidence: float = Field(ge=0.0, le=1.0)
    avatar_id: str | None = None
    scope: Scope = "avatar"
    durability: Durability = "durable"
    sensitivity: Sensitivity = "low"
    temporal_marker: str | None = None  # as the user said it: "next Friday"
    time_anchor: datetime | None = None  # resolved in the user's time zone at extraction
    source: Source = Field(default_factory=Source)
    embedding: list[float]
    embedding_model: str
    idempotency_key: str


class Fact(Strict):
    """A stored fact, decrypted. ``valid_to`` set: superseded (history), not deleted."""

    id: str
    user_id: str
    avatar_id: str | None = None
    subject_entity_id: str | None
    relation_to_user: str
    text: str
    type: FactType
    confidence: float
    scope: Scope = "avatar"
    durability: Durability = "durable"
    sensitivity: Sensitivity = "low"
    temporal_marker: str | None = None
    time_anchor: datetime | None = None
    valid_from: datetime
    valid_to: datetime | None = None
    source: Source = Field(default_factory=Source)
    embedding_model: str
    embedding_dim: int
    seen_count: int = 1
    last_seen_at: datetime
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None = None  # leaves retrieval then; the expiry job closes it
    ended_by: EndedBy | None = None  # why a closed version ended


class ScoredFact(Strict):
    fact: Fact
    similarity: float  # cosine similarity of the embeddings, -1..1
    score: float  # similarity after entity boost and recency decay


class Supersession(Strict):
    """Close ``old_fact_id`` (valid_to = now) and store ``replacement`` in its place."""

    old_fact_id: str
    replacement: FactDraft


class Reinforcement(Strict):
    """A near-duplicate was seen again: raise confidence, count it, touch last_seen_at."""

    fact_id: str
    confidence: float = Field(ge=0.0, le=1.0)


class PendingItem(Strict):
    """Facts held back until the user answers: which person is meant, or which fact holds."""

    id: str  # uuid
    user_id: str
    chat_id: str | None = None
    kind: PendingKind
    mention: str | None = None  # disambiguation: the name as written
    candidate_ids: list[str] = Field(default_factory=list)  # disambiguation: person ids
    proposed_person: Person | None = None  # "someone else": created if the user says so
    facts: list[FactDraft] = Field(default_factory=list)
    conflicting_fact_id: str | None = None  # fact_conflict: the current fact
    created_at: datetime
    resolved_at: datetime | None = None


class ExtractionChanges(Strict):
    """Everything one extraction task writes, applied in one transaction."""

    new_persons: list[Person] = Field(default_factory=list)
    # Known persons with what this message taught about them (a new alias, a missing
    # descriptor); written only if unchanged since read (``updated_at``), else skipped.
    learned_persons: list[Person] = Field(default_factory=list)
    new_facts: list[FactDraft] = Field(default_factory=list)
    supersessions: list[Supersession] = Field(default_factory=list)
    reinforcements: list[Reinforcement] = Field(default_factory=list)
    pending: list[PendingItem] = Field(default_factory=list)


class SemanticQuery(Strict):
    embedding: list[float]
    embedding_model: str
    limit: int = Field(default=10, ge=1, le=100)
    min_similarity: float = 0.35
    boost_subject_ids: list[str] = Field(default_factory=list)  # entities of this turn
    boost: float = 0.1
    privacy_mode: bool = False  # hides sensitivity "high"
    half_life_days: float = 180.0  # recency decay of last_seen_at, applied in the query


class TemporalQuery(Strict):
    start: datetime
    end: datetime
    limit: int = Field(default=20, ge=1, le=200)
    privacy_mode: bool = False
    subject_ids: list[str | None] | None = None  # None: any subject; [None]: the user
    stated: bool = False  # also facts first stated (valid_from) in the window
    at: datetime | None = None  # leave out facts expired by then


class RecallQuery(Strict):
    """What the hybrid retrieval asks the store: the dense and the keyword channel's
    candidates in one round trip. ``terms`` are plaintext here; the adapter hashes them."""

    embedding: list[float]
    embedding_model: str
    terms: list[str] = Field(default_factory=list, max_length=64)
    pool: int = Field(default=50, ge=1, le=200)  # candidates per channel
    privacy_mode: bool = False
    as_of: datetime | None = None  # None: now (current, unexpired facts)
    boost_subject_ids: list[str] = Field(default_factory=list)
    boost: float = 0.1
    half_life_days: float = 180.0
    # The temporal channel: facts about, or first stated in, [start, end), nearest first.
    window: tuple[datetime, datetime] | None = None


class ExpiredFacts(Strict):
    """One batch of the expiry job: how many facts it closed, and whose."""

    closed: int = 0
    user_ids: list[str] = Field(default_factory=list)


class SessionNote(Strict):
    """A chat's running summary as session memory: what was discussed, and when."""

    chat_id: str
    summary: str = Field(min_length=1, max_length=4000)
    started_at: datetime  # the oldest message it covers
    covers_until: datetime  # the newest


class FactPosition(Strict):
    """A keyset position in the facts' order ``(created_at, id)``: a page starts after it."""

    created_at: AwareDatetime
    id: str


class FactFilter(Strict):
    """Which facts ``list_facts`` answers, in the order ``(created_at, id)`` ascending: a
    fact stored later sorts after every fact that existed, so paging by ``after`` neither
    skips nor repeats the facts that were there at the first page."""

    subject_id: str | None = None  # a person id, or SELF for the user's own facts
    fact_type: FactType | None = None
    include_history: bool = False  # superseded facts too
    limit: int = Field(default=200, ge=1, le=1000)
    after: FactPosition | None = None  # the last fact of the previous page


class StaleFact(Strict):
    """A stored fact whose vector is of another embedding model (to be re-embedded)."""

    user_id: str
    fact_id: str
    text: str  # decrypted with the user's key, held in memory only
    embedding_model: str


class TaskStatus(Strict):
    """Before an extraction spends a model call: done already, or the account erased since."""

    done: bool = False
    erased_at: datetime | None = None

    def refuses(self, issued_at: datetime) -> bool:
        """Work issued at ``issued_at`` must not run: done, or issued before an erasure."""
        return self.done or self.erased_since(issued_at)

    def erased_since(self, issued_at: datetime) -> bool:
        return self.erased_at is not None and issued_at <= self.erased_at
