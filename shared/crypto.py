"""Envelope encryption of user data: AES-256-GCM under a per-user data key. Pure, no I/O.

Each user has one random 256-bit data key (wrapped by a key-encryption key and stored by a
``KeyRing``). Two sub-keys are derived from it with HKDF-SHA256, one per purpose:

- **encryption**: AES-256-GCM with a random 96-bit nonce per message. The associated data
  binds the format version, the user id and a context naming the column ("facts.text"), so a
  ciphertext copied to another column or another user's row does not decrypt.
- **name hash**: HMAC-SHA256 over the folded name (``shared.conversation.text.fold``, the
  fold the fact system compares names with), so "José", "jose" and "JOSE!" find the same
  person without the name being stored in clear. Keyed per user: equal names of two users
  hash differently, and a dump cannot be dictionary-attacked without the user's key.
- **term hash**: the blind keyword index. HMAC-SHA256 of a term (``shared.conversation.
  terms``) under a third key, cut to a signed 64-bit integer (PostgreSQL's bigint): within
  one user's few thousand terms a collision is a 1 in 10^12 event, and it only adds a
  candidate. It shows which of a user's facts share a word, never the word.

Ciphertext format (version 1)::

    0x01 | nonce (12 bytes) | AES-GCM ciphertext and tag (len(plaintext) + 16 bytes)
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Sequence
from typing import Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from shared.conversation.text import fold

DATA_KEY_BYTES = 32
NONCE_BYTES = 12
TAG_BYTES = 16
VERSION = 1
_HEADER = bytes([VERSION])
_ENCRYPTION_INFO = b"assistant/v1/aes-256-gcm"
_NAME_HASH_INFO = b"assistant/v1/name-hash"
_TERM_HASH_INFO = b"assistant/v1/term-hash"


class DecryptionFailed(Exception):
    """The ciphertext is malformed, of an unknown version, tampered with, or bound to
    another user, context or key. Never carries the plaintext or the key."""


class KeyEncryptionKey(Protocol):
    """Wraps per-user data keys: Cloud KMS in production, a local key file in dev and tests.

    The user id is bound as associated data, so a wrapped key moved to another user's row
    does not unwrap."""

    kek_id: str  # which key wrapped a data key: stored next to it

    def wrap(self, data_key: bytes, user_id: str) -> bytes: ...

    def unwrap(self, wrapped: bytes, user_id: str) -> bytes: ...


def new_data_key() -> bytes:
    return os.urandom(DATA_KEY_BYTES)


def seal(key: bytes, plaintext: bytes, associated_data: bytes) -> bytes:
    """AES-256-GCM with a random nonce, in the versioned format above."""
    nonce = os.urandom(NONCE_BYTES)
    return _HEADER + nonce + AESGCM(key).encrypt(nonce, plaintext, _HEADER + associated_data)


def open_sealed(key: bytes, sealed: bytes, associated_data: bytes) -> bytes:
    if len(sealed) < 1 + NONCE_BYTES + TAG_BYTES or sealed[:1] != _HEADER:
        raise DecryptionFailed("not a version-1 ciphertext")
    nonce, body = sealed[1 : 1 + NONCE_BYTES], sealed[1 + NONCE_BYTES :]
    try:
        return AESGCM(key).decrypt(nonce, body, _HEADER + associated_data)
    except InvalidTag as exc:
        raise DecryptionFailed("ciphertext does not authenticate") from exc


def bound_to(user_id: str, context: str) -> bytes:
    """Associated data naming the user and the context, unambiguously (length-prefixed)."""
    user = user_id.encode()
    return len(user).to_bytes(4, "big") + user + context.encode()


def _derive(data_key: bytes, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(data_key)


class DataKeyCipher:
    """One user's ``UserCipher``: encryption and name hashing under their data key."""

    __slots__ = ("_encryption_key", "_name_key", "_term_key", "user_id")

    def __init__(self, user_id: str, data_key: bytes) -> None:
        if len(data_key) != DATA_KEY_BYTES:
            raise ValueError("a data key has 32 bytes")
        self.user_id = user_id
        self._encryption_key = _derive(data_key, _ENCRYPTION_INFO)
        self._name_key = _derive(data_key, _NAME_HASH_INFO)
        self._term_key = _derive(data_key, _TERM_HASH_INFO)

    def __repr__(self) -> str:  # never the key material
        return f"DataKeyCipher(user_id={self.user_id!r})"

    def encrypt(self, plaintext: str, context: str) -> bytes:
        return seal(self._encryption_key, plaintext.encode(), bound_to(self.user_id, context))

    def decrypt(self, ciphertext: bytes, context: str) -> str:
        sealed = bytes(ciphertext)  # pg8000 may hand out memoryview-like bytea values
        return open_sealed(self._encryption_key, sealed, bound_to(self.user_id, context)).decode()

    def name_hash(self, name: str) -> bytes:
        return hmac.new(self._name_key, fold(name).encode(), hashlib.sha256).digest()

    def term_hashes(self, terms: Sequence[str]) -> list[int]:
        return [
            int.from_bytes(
                hmac.new(self._term_key, term.encode(), hashlib.sha256).digest()[:8],
                "big",
                signed=True,
            )
            for term in terms
        ]
