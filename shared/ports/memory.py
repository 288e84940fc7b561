"""Long-term memory: facts, session summaries, persons, held-back facts, and how they are ranked."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import numpy as np
import numpy.typing as npt

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

# A stored vector as retrieval reads it back (for diversity): numpy, never a list of floats.
Embedding = npt.NDArray[np.float32]


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
