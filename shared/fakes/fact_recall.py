"""The hybrid retrieval's candidates for the in-memory fact store: what
``postgres_fact_recall`` computes, exactly (no index, no candidate pool for the index).

The keyword statistics are those the database's triggers keep: over the user's current
facts, whatever their model, sensitivity or expiry.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Iterable
from datetime import datetime

import numpy as np

from shared.adapters.fact_rules import bm25_idf, bm25_term, decay_rate, fetching_terms, uuids
from shared.fakes.fact_search import similarity
from shared.fakes.fact_state import StoredFact
from shared.models.memory import Fact, RecallQuery
from shared.ports import RecallCandidate


def recall(facts: Iterable[StoredFact], query: RecallQuery, now: datetime) -> list[RecallCandidate]:
    if not query.embedding:
        return []
    everything = list(facts)
    moment, as_of = query.as_of or now, query.as_of is not None
    valid = [
        s
        for s in everything
        if s.fact.embedding_model == query.embedding_model
        and s.fact.embedding_dim == len(query.embedding)
        and s.valid_at(moment, as_of)
        and not (query.privacy_mode and s.fact.sensitivity == "high")
    ]
    sims = {s.fact.id: similarity(query.embedding, s.embedding) for s in valid}
    nearest = sorted(valid, key=lambda s: (-sims[s.fact.id], s.fact.id))[: query.pool]
    boost_ids = set(uuids(query.boost_subject_ids))
    about = [s for s in valid if s.fact.subject_entity_id in boost_ids]
    about.sort(key=lambda s: s.fact.last_seen_at, reverse=True)
    dense = {s.fact.id for s in [*nearest, *about[: query.pool]]}
    timed = set()
    if query.window is not None:
        start, end = query.window
        inside = [
            s
            for s in valid
            if (s.fact.time_anchor is not None and start <= s.fact.time_anchor < end)
            or start <= s.fact.valid_from < end
        ]
        inside.sort(key=lambda s: (-sims[s.fact.id], s.fact.id))
        timed = {s.fact.id for s in inside[: query.pool]}
    keyword = _bm25([s for s in everything if s.current()], valid, query)
    rate = decay_rate(query.half_life_days)
    found = []
    for stored in valid:
        fact = stored.fact
        if fact.id not in dense and fact.id not in keyword and fact.id not in timed:
            continue
        age = max((now - fact.last_seen_at).total_seconds(), 0.0)
        score = sims[fact.id] * math.exp(-rate * age)
        score += query.boost if fact.subject_entity_id in boost_ids else 0.0
        found.append(
            RecallCandidate(
                fact_id=fact.id,
                similarity=sims[fact.id],
                dense_score=score if fact.id in dense else None,
                keyword_score=keyword.get(fact.id),
                embedding=np.asarray(stored.embedding, dtype=np.float32),
                in_window=fact.id in timed,
                read=functools.partial(_read, fact),
            )
        )
    return found


def _bm25(
    current: list[StoredFact], valid: list[StoredFact], query: RecallQuery
) -> dict[str, float]:
    """BM25 of the facts holding one of the query's rarer terms, the best ``pool`` of them."""
    wanted = set(query.terms)
    docs = Counter(t for s in current for t in set(s.terms) if t in wanted)
    total = sum(1 for s in current if s.terms)
    if total == 0 or not docs:
        return {}
    average = sum(len(s.terms) for s in current) / total
    idf = {t: bm25_idf(n, total) for t, n in docs.items()}
    fetching = fetching_terms(dict(docs), total)
    scores: dict[str, float] = {}
    for stored in valid:
        if not fetching & set(stored.terms):
            continue
        counts = Counter(stored.terms)
        scores[stored.fact.id] = sum(
            bm25_term(idf[t], counts[t], len(stored.terms), average) for t in idf if t in counts
        )
    best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[: query.pool]
    return dict(best)


def _read(fact: Fact) -> Fact:
    return fact  # what ``facts_by_id`` returns: the stored value (facts are not mutated)
