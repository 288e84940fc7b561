"""The hybrid retrieval's latency next to today's search, on the same synthetic facts.

``Retriever.recall`` runs as the turn graph runs it (the product's channels: dense, keyword
over the blind index, temporal, sessions, MMR, the identity reranker), with the question's
vector given (embedding the question is the model's time, not the search's): the store's
round trips, decryption, fusion and diversity are what is measured. ``statement_latency``
times the recall's one statement alone, with every channel and with the dense one only:
where the time goes."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence

import numpy as np

from bench.retrieval_data import MODEL, NOW
from shared.adapters.postgres import Database
from shared.adapters.postgres_fact_recall import recall_statement, statement_rows
from shared.adapters.rerankers import IdentityReranker
from shared.models.memory import RecallQuery
from shared.ports import EmbedTask, FactStore, KeyRing, SessionMemory
from shared.services.memory.retrieval import POOL, RecallRequest, Retriever
from shared.services.memory.understanding import understand


class GivenVector:
    """An ``Embedder`` answering with the vector the bench set for the next question."""

    model_name = MODEL

    def __init__(self) -> None:
        self.vector: list[float] = []

    def embed(
        self, texts: Sequence[str], task: EmbedTask = "RETRIEVAL_DOCUMENT"
    ) -> list[list[float]]:
        return [list(self.vector) for _ in texts]


def hybrid_latency(
    facts: FactStore, sessions: SessionMemory, user: str, queries: np.ndarray, texts: list[str]
) -> dict[str, float]:
    embedder = GivenVector()
    retriever = Retriever(facts, embedder, IdentityReranker(), sessions)
    timings = []
    for index, (vector, text) in enumerate(zip(queries, texts, strict=True)):
        embedder.vector = vector.tolist()
        started = time.perf_counter()
        retriever.recall(user, RecallRequest(question=text, limit=8), NOW)
        if index >= 20:  # the first ones warm the caches
            timings.append((time.perf_counter() - started) * 1000)
    return _cuts(timings)


def statement_latency(
    db: Database, keys: KeyRing, user: str, queries: np.ndarray, texts: list[str]
) -> dict[str, dict[str, float]]:
    """p50/p95 of the recall's transaction alone: every channel, and the dense one only."""
    timings: dict[str, list[float]] = {"all channels": [], "dense only": []}
    cipher = keys.cipher_for(user)
    for index, (vector, text) in enumerate(zip(queries, texts, strict=True)):
        plan = understand(text, [], NOW, "UTC")
        query = RecallQuery(embedding=vector.tolist(), embedding_model=MODEL, terms=plan.terms,
                            pool=POOL, window=plan.window)  # fmt: skip
        hashes = sorted(set(cipher.term_hashes(query.terms)))
        for name, terms in (("all channels", hashes), ("dense only", [])):
            statement = recall_statement(user, query, NOW, terms, 200)
            started = time.perf_counter()
            statement_rows(db, statement)
            if index >= 20:
                timings[name].append((time.perf_counter() - started) * 1000)
    return {name: _cuts(values) for name, values in timings.items()}


def _cuts(timings: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(timings, n=100)
    return {"p50": cuts[49], "p95": cuts[94]}
