"""Retrieval for the in-memory fact store: the PostgreSQL adapter's scoring, computed exactly.

``score = similarity * exp(-ln 2 * age(last_seen_at) / half_life) + boost`` over every
current fact of the query's embedding model and dimension (no index, no candidate pool).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

import numpy as np

from shared.adapters.fact_rules import decay_rate, uuids
from shared.fakes.fact_state import StoredFact
from shared.models.memory import Fact, ScoredFact, SemanticQuery, TemporalQuery


def _comparable(
    facts: Iterable[StoredFact], embedding: Sequence[float], model: str
) -> list[StoredFact]:
    return [
        s
        for s in facts
        if s.current()
        and s.fact.embedding_model == model
        and s.fact.embedding_dim == len(embedding)
    ]


def similarity(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity, on float32 like pgvector's stored vectors."""
    x, y = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    norms = float(np.linalg.norm(x)) * float(np.linalg.norm(y))
    return float(np.dot(x.astype(np.float64), y.astype(np.float64))) / norms if norms else 0.0


def nearest(
    facts: Iterable[StoredFact], embedding: Sequence[float], model: str, limit: int
) -> list[ScoredFact]:
    scored = [
        (similarity(embedding, s.embedding), s.fact) for s in _comparable(facts, embedding, model)
    ]
    scored.sort(key=lambda pair: (-pair[0], pair[1].id))
    return [ScoredFact(fact=f, similarity=sim, score=sim) for sim, f in scored[: max(limit, 0)]]


def search(facts: Iterable[StoredFact], query: SemanticQuery, now: datetime) -> list[ScoredFact]:
    rate = decay_rate(query.half_life_days)
    boosted = set(uuids(query.boost_subject_ids))
    found: list[ScoredFact] = []
    for stored in _comparable(facts, query.embedding, query.embedding_model):
        fact = stored.fact
        if query.privacy_mode and fact.sensitivity == "high":
            continue
        if not stored.valid_at(now, as_of=False):  # expired, not yet closed
            continue
        cosine = similarity(query.embedding, stored.embedding)
        if cosine < query.min_similarity:
            continue
        age = max((now - fact.last_seen_at).total_seconds(), 0.0)
        boost = query.boost if fact.subject_entity_id in boosted else 0.0
        score = cosine * math.exp(-rate * age) + boost
        found.append(ScoredFact(fact=fact, similarity=cosine, score=score))
    found.sort(key=lambda s: (-s.score, s.fact.id))
    return found[: query.limit]


def in_window(facts: Iterable[StoredFact], query: TemporalQuery) -> list[Fact]:
    start, end = _aware(query.start), _aware(query.end)
    subjects = None
    if query.subject_ids is not None:
        subjects = {*uuids(query.subject_ids), *([None] if None in query.subject_ids else [])}
    found = [
        s.fact
        for s in facts
        if s.current()
        and _within(s.fact, start, end, query.stated)
        and (query.at is None or s.valid_at(query.at, as_of=False))
        and not (query.privacy_mode and s.fact.sensitivity == "high")
        and (subjects is None or s.fact.subject_entity_id in subjects)
    ]
    found.sort(key=lambda f: (f.time_anchor or f.valid_from, f.created_at, f.id))
    return found[: query.limit]


def _within(fact: Fact, start: datetime, end: datetime, stated: bool) -> bool:
    anchored = fact.time_anchor is not None and start <= fact.time_anchor < end
    return anchored or (stated and start <= fact.valid_from < end)


def _aware(value: datetime) -> datetime:
    """A bound without a time zone is taken as UTC."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
