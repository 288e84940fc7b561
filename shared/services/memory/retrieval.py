"""Hybrid retrieval: what the turn graph and the settings API recall for a question.

1. **Understanding** (``understanding.py``): references resolved against the recent
   conversation, the time window the question names.
2. **Channels** (``FactStore.recall``, one statement on PostgreSQL; each candidate with
   what decrypts it if it is kept): dense (the embedding's nearest, scored with recency
   decay and the turn's people boosted, above a similarity floor), keyword (BM25 over the
   blind index of keyed term hashes), temporal (facts about or stated in the window, when
   there is one); and session summaries (``SessionMemory``), while the facts' channels run.
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
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache

import numpy as np

from shared.errors import DependencyUnavailable
from shared.models.memory import Fact, RecallQuery, SessionNote
from shared.ports import (
    Embedder,
    Embedding,
    FactStore,
    RecallCandidate,
    Reranker,
    SessionMemory,
)
from shared.services.memory.needs import MemoryPorts
from shared.services.memory.understanding import QueryPlan, literal, understand

log = logging.getLogger("retrieval")

RRF_K = 60
POOL = 30  # candidates per channel
RERANK_POOL = 50
# Relevance against novelty: 0.7 gained a question on the tuning set and lost one (and
# 0.067 at recall@5) on the held-out one; 0.9 loses nothing at recall@10 on either.
MMR_LAMBDA = 0.9
MMR_POOL = 30  # the head of the fused list diversity chooses from
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
    """A candidate while it is ranked: a fact (read only if it is kept) or a session."""

    key: str
    similarity: float
    embedding: Embedding
    fact_id: str | None = None
    session: SessionNote | None = None
    score: float = 0.0
    read: Callable[[], Fact] | None = None  # the fact, from what the store already fetched


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
        [vector] = self._embedder.embed([plan.text], task="RETRIEVAL_QUERY")
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
        # the session channel's round trip runs while the facts' does
        sessions = _background().submit(self._session_list, user_id, query)
        candidates = self._facts.recall(user_id, query, now)
        ranked = _fuse([*self._fact_lists(candidates), sessions.result()])
        facts: dict[str, Fact] = {}
        if on.rerank and ranked:
            ranked = self._rerank(user_id, plan.text, ranked, facts)
        chosen = _mmr(ranked, request.limit, on.mmr_lambda) if on.mmr else ranked
        chosen = chosen[: request.limit]
        self._read(user_id, chosen, facts)
        return Recall(plan=plan, items=[_recalled(item, facts) for item in chosen
                                        if item.session or item.fact_id in facts])  # fmt: skip

    # -- channels -----------------------------------------------------------------------------
    def _fact_lists(self, candidates: list[RecallCandidate]) -> list[list[_Item]]:
        on, lists = self.channels, []

        def item(c: RecallCandidate) -> _Item:
            return _Item(c.fact_id, c.similarity, c.embedding, fact_id=c.fact_id, read=c.read)

        if on.dense:
            dense = [c for c in candidates if c.dense_score is not None]
            dense = [c for c in dense if c.similarity >= MIN_SIMILARITY]
            dense.sort(key=lambda c: (-(c.dense_score or 0.0), c.fact_id))
            lists.append([item(c) for c in dense])
        if on.keyword:
            keyword = [c for c in candidates if c.keyword_score is not None]
            # many facts tie on BM25 (one shared rare word): the closer one first
            keyword.sort(key=lambda c: (-(c.keyword_score or 0.0), -c.similarity, c.fact_id))
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
            _Item(f"session:{s.note.chat_id}", s.similarity, s.embedding, session=s.note)
            for s in found
            if s.similarity >= SESSION_MIN_SIMILARITY or query.window is not None
        ]

    def _read(self, user_id: str, items: list[_Item], facts: dict[str, Fact]) -> None:
        """Decrypt the facts of ``items`` not read yet: from what the store sent with the
        candidates, or else in one round trip."""
        wanted = [i for i in items if i.fact_id is not None and i.fact_id not in facts]
        facts.update((i.fact_id, i.read()) for i in wanted if i.fact_id and i.read is not None)
        unread = [i.fact_id for i in wanted if i.fact_id is not None and i.read is None]
        if unread:
            facts.update((f.id, f) for f in self._facts.facts_by_id(user_id, unread))

    def _rerank(
        self, user_id: str, query: str, ranked: list[_Item], facts: dict[str, Fact]
    ) -> list[_Item]:
        if not self._reranker.reads_texts:
            return ranked  # the identity: nothing to read or reorder
        head, tail = ranked[:RERANK_POOL], ranked[RERANK_POOL:]
        self._read(user_id, head, facts)
        texts = [_text(item, facts) for item in head]
        try:
            order = self._reranker.rerank(query, texts)
        except DependencyUnavailable:  # a ranking outage costs precision, not the answer
            log.warning("reranker unavailable, keeping the fused order")
            return ranked
        return [head[i] for i in order] + tail


@lru_cache(maxsize=1)
def _background() -> ThreadPoolExecutor:
    """One small pool per process for the session channel (a thread per call would cost
    more than the round trip it hides)."""
    return ThreadPoolExecutor(max_workers=4, thread_name_prefix="recall")


def _fuse(lists: list[list[_Item]]) -> list[_Item]:
    scores: dict[str, float] = {}
    items: dict[str, _Item] = {}
    for ranked in lists:
        for rank, item in enumerate(ranked, start=1):
            scores[item.key] = scores.get(item.key, 0.0) + 1.0 / (RRF_K + rank)
            items.setdefault(item.key, item)
    order = sorted(scores, key=lambda key: (-scores[key], key))
    for key in order:
        items[key].score = scores[key]
    return [items[key] for key in order]


def _text(item: _Item, facts: dict[str, Fact]) -> str:
    if item.session is not None:
        return item.session.summary
    fact = facts.get(item.fact_id or "")
    return fact.text if fact is not None else ""


def _recalled(item: _Item, facts: dict[str, Fact]) -> Recalled:
    fact = facts.get(item.fact_id) if item.fact_id is not None else None
    return Recalled(score=item.score, similarity=item.similarity, fact=fact, session=item.session)


def _mmr(ranked: list[_Item], limit: int, weight: float) -> list[_Item]:
    """Maximal marginal relevance over the head of the ranked list: relevance is the
    reciprocal rank of the position (as in the fusion: 1 for the first, (RRF_K + 1) /
    (RRF_K + n) for the n-th), the penalty the highest cosine to an item already chosen."""
    head, tail = ranked[:MMR_POOL], ranked[MMR_POOL:]
    if len(head) <= 1 or len({len(item.embedding) for item in head}) != 1:
        return ranked  # nothing to choose from, or vectors of two models: keep the order
    vectors = np.stack([item.embedding for item in head])
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    relevance = (RRF_K + 1) / (RRF_K + 1 + np.arange(len(head)))
    closest = np.zeros(len(head), dtype=np.float32)  # highest cosine to anything chosen
    left, chosen = np.ones(len(head), dtype=bool), list[int]()
    while left.any() and len(chosen) < limit:
        gain = np.where(left, weight * relevance - (1.0 - weight) * closest, -np.inf)
        best = int(np.argmax(gain))
        chosen.append(best)
        left[best] = False
        # one matrix-vector product per pick: no n x n matrix (and no BLAS threads) needed
        closest = np.maximum(closest, vectors @ vectors[best])
    rest = [item for index, item in enumerate(head) if left[index]]
    return [head[i] for i in chosen] + rest + tail
