"""A user's settings, trust record, data keys, and everything held for them (export, erasure)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Protocol

from shared.models.domain import AssistantProfile
from shared.models.memory_api import ConversationExport
from shared.models.trust import HitlMode, TrustRecord


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
