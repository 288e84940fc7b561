"""Hybrid retrieval: what the turn graph and the settings API recall for a question.

1. **Understanding** (``understanding.py``): references resolved against the recent
   conversation, the time window the question names.
2. **Channels**, fetched in one round trip (``FactStore.recall``): dense (the embedding's
   nearest, scored with recency decay and the turn's people boosted, above a similarity
   floor), keyword (BM25 over the blind index of keyed term hashes), temporal (facts about or
   stated in the window, when there is one); and session summaries (``SessionMemory``).
3. **Fusion** by reciprocal rank: ``score = sum over channels of 1 / (RRF_K + rank)``, so a
   fact that only one channel finds still competes, and ranks, not raw scores, are compared.
4. **Reranking** (``Reranker``) of the fused top ``RERANK_POOL``: the Vertex AI ranking API
   in production, identity locally.
5. **Diversity**: maximal marginal relevance picks the final ``limit`` so that paraphrases of
   one fact do not crowd out the second fact a multi-hop answer needs.

Which channels run is a ``Channels`` value: ``bench/retrieval.py --quality`` measures each
step on the project's own dataset, and the defaults are what that measurement kept.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from shared.errors import DependencyUnavailable
from shared.models.memory import Fact, RecallQuery, SessionNote
from shared.ports import Embedder, FactStore, RecallCandidate, Reranker, SessionMemory
from shared.services.memory.ports import MemoryPorts
from shared.services.memory.understanding import QueryPlan, literal, understand

log = logging.getLogger("retrieval")

RRF_K = 60
POOL = 50  # candidates per channel
RERANK_POOL = 50
MMR_LAMBDA = 0.7  # relevance against novelty
HALF_LIFE_DAYS = 180.0
MIN_SIMILARITY = 0.35  # the dense channel's floor (another channel may still bring a fact)
# A summary is long and a question short: their cosines run lower than a fact's.
SESSION_MIN_SIMILARITY = 0.25


@dataclass(frozen=True)
class Channels:
    dense: bool = True
    keyword: bool = True
    temporal: bool = True
    sessions: bool = True
    understanding: bool = True
    rerank: bool = True
    mmr: bool = True
    mmr_lambda: float = MMR_LAMBDA
    # The dense channel's recency decay (half-life HALF_LIFE_DAYS): off, by measurement: it
    # buried facts stated months ago under recent small talk (recall@10 0.80 -> 0.90 off).
    decay: bool = False


@dataclass(frozen=True)
class RecallRequest:
    question: str
    recent: Sequence[str] = ()  # the conversation's last messages, oldest first
    limit: int = 8
    timezone: str = "UTC"
    privacy_mode: bool = False
    boost_subject_ids: Sequence[str] = ()
    as_of: datetime | None = None


@dataclass(frozen=True)
class Recalled:
    """A fact, or a session summary, with its fused score."""

    score: float
    similarity: float
    fact: Fact | None = None
    session: SessionNote | None = None

    @property
    def key(self) -> str:
        if self.fact is not None:
            return self.fact.id
        return f"session:{self.session.chat_id}" if self.session is not None else ""

    @property
    def text(self) -> str:
        return self.fact.text if self.fact else self.session.summary if self.session else ""


@dataclass(frozen=True)
class Recall:
    plan: QueryPlan
    items: list[Recalled] = field(default_factory=list)

    @property
    def facts(self) -> list[Recalled]:
        return [item for item in self.items if item.fact is not None]

    @property
    def sessions(self) -> list[Recalled]:
        return [item for item in self.items if item.session is not None]


@dataclass
class _Item:
    recalled: Recalled
    embedding: list[float]


class Retriever:
    @classmethod
    def of(cls, ports: MemoryPorts, channels: Channels | None = None) -> Retriever:
        return cls(ports.facts, ports.embedder, ports.reranker, ports.sessions, channels)

    def __init__(
        self,
        facts: FactStore,
        embedder: Embedder,
        reranker: Reranker,
        sessions: SessionMemory | None = None,
        channels: Channels | None = None,
    ) -> None:
        self._facts = facts
        self._embedder = embedder
        self._reranker = reranker
        self._sessions = sessions
        self.channels = channels or Channels()

    def recall(self, user_id: str, request: RecallRequest, now: datetime) -> Recall:
        on = self.channels
        plan = (
            understand(request.question, request.recent, request.as_of or now, request.timezone)
            if on.understanding
            else literal(request.question)
        )
        [vector] = self._embedder.embed([plan.text])
        query = RecallQuery(
            embedding=vector,
            embedding_model=self._embedder.model_name,
            terms=plan.terms if on.keyword else [],
            pool=POOL,
            privacy_mode=request.privacy_mode,
            as_of=request.as_of,
            boost_subject_ids=list(request.boost_subject_ids),
            window=plan.window if on.temporal else None,
            half_life_days=HALF_LIFE_DAYS if on.decay else 0.0,
        )
        candidates = self._facts.recall(user_id, query, now)
        ranked = self._fuse(self._fact_lists(candidates), self._session_list(user_id, query))
        if on.rerank and ranked:
            ranked = self._rerank(plan.text, ranked)
        chosen = _mmr(ranked, request.limit, on.mmr_lambda) if on.mmr else ranked
        return Recall(plan=plan, items=[item.recalled for item in chosen[: request.limit]])

    # -- channels -----------------------------------------------------------------------------
    def _fact_lists(self, candidates: list[RecallCandidate]) -> list[list[_Item]]:
        on, lists = self.channels, []

        def item(c: RecallCandidate) -> _Item:
            return _Item(Recalled(score=0.0, similarity=c.similarity, fact=c.fact), c.embedding)

        if on.dense:
            dense = [c for c in candidates if c.dense_score is not None]
            dense = [c for c in dense if c.similarity >= MIN_SIMILARITY]
            dense.sort(key=lambda c: (-(c.dense_score or 0.0), c.fact.id))
            lists.append([item(c) for c in dense])
        if on.keyword:
            keyword = [c for c in candidates if c.keyword_score is not None]
            # many facts tie on BM25 (one shared rare word): the closer one first
            keyword.sort(key=lambda c: (-(c.keyword_score or 0.0), -c.similarity, c.fact.id))
            lists.append([item(c) for c in keyword])
        if on.temporal:
            timed = sorted((c for c in candidates if c.in_window), key=lambda c: -c.similarity)
            lists.append([item(c) for c in timed])
        return lists

    def _session_list(self, user_id: str, query: RecallQuery) -> list[_Item]:
        if not self.channels.sessions or self._sessions is None:
            return []
        found = self._sessions.recall_sessions(user_id, query, query.window)
        return [
            _Item(Recalled(score=0.0, similarity=s.similarity, session=s.note), s.embedding)
            for s in found
            if s.similarity >= SESSION_MIN_SIMILARITY or query.window is not None
        ]

    @staticmethod
    def _fuse(lists: list[list[_Item]], sessions: list[_Item]) -> list[_Item]:
        scores: dict[str, float] = {}
        items: dict[str, _Item] = {}
        for ranked in [*lists, sessions]:
            for rank, item in enumerate(ranked, start=1):
                key = item.recalled.key
                scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + rank)
                items.setdefault(key, item)
        order = sorted(scores, key=lambda key: (-scores[key], key))
        return [
            _Item(_with_score(items[key].recalled, scores[key]), items[key].embedding)
            for key in order
        ]

    def _rerank(self, query: str, ranked: list[_Item]) -> list[_Item]:
        head, tail = ranked[:RERANK_POOL], ranked[RERANK_POOL:]
        try:
            order = self._reranker.rerank(query, [item.recalled.text for item in head])
        except DependencyUnavailable:  # a ranking outage costs precision, not the answer
            log.warning("reranker unavailable, keeping the fused order")
            return ranked
        return [head[i] for i in order] + tail


def _with_score(recalled: Recalled, score: float) -> Recalled:
    return Recalled(score=score, similarity=recalled.similarity, fact=recalled.fact,
                    session=recalled.session)  # fmt: skip


def _mmr(ranked: list[_Item], limit: int, weight: float) -> list[_Item]:
    """Maximal marginal relevance over the ranked list: relevance is the reciprocal rank of
    the position (as in the fusion: 1 for the first, RRF_K+1 / RRF_K+n for the n-th), the
    penalty the highest cosine to an item already chosen."""
    if len(ranked) <= 1:
        return ranked
    dims = {len(item.embedding) for item in ranked}
    if len(dims) != 1:  # sessions of another model: nothing to compare, keep the order
        return ranked
    vectors = np.asarray([item.embedding for item in ranked], dtype=np.float64)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    cosine = vectors @ vectors.T
    relevance = (RRF_K + 1) / (RRF_K + 1 + np.arange(len(ranked)))
    closest = np.zeros(len(ranked))  # highest cosine to anything chosen so far
    left, chosen = np.ones(len(ranked), dtype=bool), list[int]()
    while left.any() and len(chosen) < limit:
        gain = np.where(left, weight * relevance - (1.0 - weight) * closest, -np.inf)
        best = int(np.argmax(gain))
        chosen.append(best)
        left[best] = False
        closest = np.maximum(closest, cosine[best])
    return [ranked[i] for i in chosen]
