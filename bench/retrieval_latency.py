"""The hybrid retrieval's latency next to today's search, on the same synthetic facts.

``Retriever.recall`` runs as the turn graph runs it (the product's channels: dense, keyword
over the blind index, temporal, sessions, MMR, the identity reranker), with the question's
vector given (embedding the question is the model's time, not the search's): the store's
round trips, decryption, fusion and diversity are what is measured."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence

import numpy as np

from bench.retrieval_data import MODEL, NOW
from shared.adapters.rerankers import IdentityReranker
from shared.ports import FactStore, SessionMemory
from shared.services.memory.retrieval import RecallRequest, Retriever


class GivenVector:
    """An ``Embedder`` answering with the vector the bench set for the next question."""

    model_name = MODEL

    def __init__(self) -> None:
        self.vector: list[float] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
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
    cuts = statistics.quantiles(timings, n=100)
    return {"p50": cuts[49], "p95": cuts[94]}
