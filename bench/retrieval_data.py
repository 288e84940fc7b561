"""Synthetic facts for ``bench.retrieval``: clustered vectors, Zipf-distributed pseudo-words,
and a binary COPY that writes them into the real ``facts`` table with genuinely encrypted
texts, keyed idempotency hashes and the blind index's keyed term hashes (the triggers count
the per-user statistics as the rows arrive)."""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from shared.adapters.postgres_memory_rows import FACT_TEXT, idempotency_hash
from shared.conversation.terms import terms
from shared.ports import UserCipher

DIMS, MODEL = 768, "bench-768"
NOW = datetime(2026, 6, 1, tzinfo=UTC)
_PG_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
_COLUMNS = (
    "id, user_id, relation_to_user, text_enc, type, confidence, scope, durability, sensitivity,"
    " valid_from, embedding, embedding_model, embedding_dim, idempotency_hash, seen_count,"
    " last_seen_at, created_at, updated_at, terms"
)
VOCABULARY = 20_000  # pseudo-words, Zipf-distributed like the words of real facts
WORDS_PER_FACT = (5, 10)


def word(index: int) -> str:
    """A pseudo-word of letters only (the term fold splits digits off): 0 -> "ba"."""
    letters, index = "", index + 27
    while index:
        index, rest = divmod(index, 26)
        letters = "bcdfghjklmnpqrstvwxzaeiouy"[rest] + letters
    return letters


class Corpus:
    def __init__(self, seed: int, clusters: int = 256, latent: int = 16) -> None:
        self.rng = np.random.default_rng(seed)
        self.centres = _unit(self.rng.standard_normal((clusters, DIMS)))
        self.basis = np.linalg.qr(self.rng.standard_normal((DIMS, latent)))[0].T
        ranks = np.arange(1, VOCABULARY + 1)
        self.word_weights = (1.0 / ranks**1.1) / np.sum(1.0 / ranks**1.1)

    def texts(self, n: int) -> list[str]:
        """Fact or query texts: Zipf-distributed pseudo-words."""
        sizes = self.rng.integers(*WORDS_PER_FACT, n)
        picks = self.rng.choice(VOCABULARY, size=int(sizes.sum()), p=self.word_weights)
        texts, at = [], 0
        for size in sizes:
            texts.append(" ".join(word(int(i)) for i in picks[at : at + size]))
            at += size
        return texts

    def sample(self, n: int, spread: float = 0.8, noise: float = 0.1) -> np.ndarray:
        picks = self.rng.integers(0, len(self.centres), n)
        latent = self.rng.standard_normal((n, self.basis.shape[0])) / np.sqrt(self.basis.shape[0])
        iso = self.rng.standard_normal((n, DIMS)) / np.sqrt(DIMS)
        return _unit(self.centres[picks] + spread * latent @ self.basis + noise * iso)


def _unit(v: np.ndarray) -> np.ndarray:
    unit: np.ndarray = (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)
    return unit


def _field(value: bytes) -> bytes:
    return struct.pack("!i", len(value)) + value


def _timestamp(value: datetime) -> bytes:
    return struct.pack("!q", (value - _PG_EPOCH) // timedelta(microseconds=1))


def _bigints(values: list[int]) -> bytes:
    """A one-dimensional bigint[] in PostgreSQL's binary array format."""
    head = struct.pack("!iiiii", 1, 0, 20, len(values), 1)
    return head + b"".join(struct.pack("!iq", 8, v) for v in values)


def _rows(
    cipher: UserCipher, user: str, vectors: np.ndarray, ids: list[str], texts: list[str]
) -> Iterator[bytes]:
    """Binary COPY tuples: real ciphertext and keyed hashes, pgvector's binary vectors."""
    const = {name: _field(value.encode()) for name, value in [
        ("user", user), ("self", "self"), ("type", "Other"), ("avatar", "avatar"),
        ("durable", "durable"), ("low", "low"), ("model", MODEL)]}  # fmt: skip
    ages = np.random.default_rng(len(ids)).uniform(0, 365, len(ids))
    for i, (vector, fact_id) in enumerate(zip(vectors, ids, strict=True)):
        seen = _field(_timestamp(NOW - timedelta(days=float(ages[i]))))
        yield b"".join([
            struct.pack("!h", 19), _field(uuid.UUID(fact_id).bytes), const["user"],
            const["self"], _field(cipher.encrypt(f"synthetic fact {i} of {user}", FACT_TEXT)),
            const["type"], _field(struct.pack("!d", 0.8)), const["avatar"], const["durable"],
            const["low"], seen,
            _field(struct.pack("!hh", DIMS, 0) + vector.astype(">f4").tobytes()),
            const["model"], _field(struct.pack("!i", DIMS)),
            _field(idempotency_hash(cipher, f"{user}/{i}")), _field(struct.pack("!i", 1)),
            seen, seen, seen, _field(_bigints(cipher.term_hashes(terms(texts[i])))),
        ])  # fmt: skip


def copy_facts(
    conn: Any, cipher: UserCipher, user: str, vectors: np.ndarray, texts: list[str]
) -> list[str]:
    ids = [str(uuid.uuid4()) for _ in range(len(vectors))]
    header = b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0)

    def chunks() -> Iterator[bytes]:
        yield header
        batch: list[bytes] = []
        for row in _rows(cipher, user, vectors, ids, texts):
            batch.append(row)
            if len(batch) == 2000:
                yield b"".join(batch)
                batch = []
        yield b"".join(batch) + struct.pack("!h", -1)

    conn.cursor().execute(
        f"COPY facts ({_COLUMNS}) FROM STDIN WITH (FORMAT binary)", stream=chunks()
    )
    conn.commit()
    return ids
