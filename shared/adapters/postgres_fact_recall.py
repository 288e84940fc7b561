"""The hybrid retrieval's candidates on PostgreSQL, both channels in one statement.

- **dense**: the nearest current facts by the partial HNSW index (as ``search`` does, with
  iterative scans), plus the facts about the turn's boosted people;
- **temporal** (when the query has a window): the facts about, or first stated in, it,
  nearest first;
- **keyword**: BM25 over the blind index. The query's terms arrive as keyed hashes; their
  per-user document frequencies come from ``fact_terms`` (kept by triggers), the GIN index
  on the narrow ``fact_keywords`` rows (current facts' terms, kept by the same triggers)
  fetches the facts holding the query's rarest terms (``fact_rules.fetching_terms``), and
  every query term then scores them.

"As of" a past moment (``query.as_of``) reads the versions valid then (``valid_from <= t <
valid_to``, not yet expired), from the user's rows without the indexes, which cover current
facts only; the term statistics are today's, an approximation the ranking tolerates.
Fusing and diversifying happen above, in ``services/memory/retrieval.py``, which then reads
the few facts it keeps (``facts_by_id``).
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from pgvector import Vector

from shared.adapters.fact_rules import (
    BM25_B,
    BM25_K1,
    FETCH_BUDGET,
    candidate_pool,
    decay_rate,
    uuids,
)
from shared.adapters.postgres import Database, as_vector
from shared.models.memory import RecallQuery
from shared.ports import KeyRing, RecallCandidate

# The keyword channel's look-up is ``terms && <the fetching terms>``, known only when the
# statement runs: the planner cannot estimate it and, with many facts, scans every narrow
# row instead of the GIN index. Every table the statement reads has the index it needs, so
# sequential scans are off for this transaction.
_SETTINGS = (
    "SELECT set_config('hnsw.ef_search', %s, true),"
    " set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('jit', 'off', true),"
    " set_config('enable_seqscan', 'off', true)"
)


def valid_sql(as_of: bool, private: bool, row: str = "") -> str:
    """Which of the user's facts count, over the columns of ``row`` ("f." or nothing).
    Parameters: ``valid_args``."""
    when = (
        f"{row}valid_from <= %s AND ({row}valid_to IS NULL OR {row}valid_to > %s)"
        if as_of
        else f"{row}valid_to IS NULL"
    )
    return (
        f"{row}user_id = %s AND {row}embedding_model = %s AND {when}"
        f" AND ({row}expires_at IS NULL OR {row}expires_at > %s)"
        + (f" AND {row}sensitivity <> 'high'" if private else "")
    )


def valid_args(user_id: str, model: str, moment: datetime, as_of: bool) -> list[Any]:
    return [user_id, model, *([moment] * (3 if as_of else 1))]


_KEYWORD = (
    " totals AS (SELECT docs, length FROM fact_term_totals WHERE user_id = %s),"
    " idf AS (SELECT t.term, t.docs, ln(1 + (s.docs - t.docs + 0.5) / (t.docs + 0.5)) AS idf"
    " FROM fact_terms t, totals s WHERE t.user_id = %s AND t.term = ANY(%s::bigint[])"
    " AND t.docs > 0),"
    # fact_rules.fetching_terms: the rarest terms while their facts fit the budget
    " fetching AS (SELECT coalesce(array_agg(r.term), '{}') AS terms FROM (SELECT i.term,"
    " i.docs, sum(i.docs) OVER (ORDER BY i.docs, i.term) - i.docs AS before FROM idf i) r,"
    " totals s WHERE r.before < %s AND r.docs <= greatest(50, s.docs / 20)),"
    # the fetched facts' terms, read once, then scored against every query term
    " fetched AS MATERIALIZED ({fetch}),"
    " keyword AS MATERIALIZED (SELECT f.id, sum(i.idf * tf.n * %s::float8 / (tf.n"
    " + %s::float8 * (1 - %s::float8 + %s::float8 * cardinality(f.terms)"
    " / (s.length::float8 / s.docs)))) AS bm25"
    " FROM fetched f CROSS JOIN totals s CROSS JOIN idf i"
    # a term's frequency in the fact, counted in C: no unnest, no grouping per fact
    " CROSS JOIN LATERAL (SELECT cardinality(array_positions(f.terms, i.term)) AS n) tf"
    " WHERE tf.n > 0 GROUP BY f.id ORDER BY bm25 DESC, f.id LIMIT %s),"
)


def recall_statements(
    user_id: str, query: RecallQuery, now: datetime, term_hashes: list[int], ef_search: int
) -> list[tuple[str, list[Any]]]:
    """The index settings, then one statement: the query vector is sent once (an InitPlan
    parameter, which the HNSW scan takes as it takes a literal), and only the channels the
    query uses are planned."""
    dim, as_of = len(query.embedding), query.as_of is not None
    vec, near = f"embedding::vector({dim})", "(SELECT v FROM q)"
    valid = valid_sql(as_of, query.privacy_mode)
    valid_args_ = valid_args(user_id, query.embedding_model, query.as_of or now, as_of)
    ctes = [f"q AS MATERIALIZED (SELECT %s::vector({dim}) AS v),"]
    args: list[Any] = [Vector(query.embedding)]
    ctes.append(f" dense AS MATERIALIZED (SELECT id FROM facts WHERE {valid} AND embedding_dim"
                f" = {dim} ORDER BY {vec} <=> {near} LIMIT %s),")  # fmt: skip
    args += [*valid_args_, query.pool]
    channels = ["dense"]
    boost_ids = uuids(query.boost_subject_ids)
    if boost_ids:
        ctes.append(f" boosted AS (SELECT id FROM facts WHERE {valid} AND embedding_dim = {dim}"
                    " AND subject_entity_id = ANY(%s::uuid[]) ORDER BY last_seen_at DESC"
                    " LIMIT %s),")  # fmt: skip
        args += [*valid_args_, boost_ids, query.pool]
        channels.append("boosted")
    if term_hashes:
        fetch, fetch_args = _fetch(as_of, query.privacy_mode, dim, valid_args_)
        ctes.append(_KEYWORD.replace("{fetch}", fetch))
        args += [user_id, user_id, term_hashes, FETCH_BUDGET, *fetch_args, BM25_K1 + 1,
                 BM25_K1, BM25_B, BM25_B, query.pool]  # fmt: skip
        channels.append("keyword")
    if query.window is not None:
        ctes.append(f" timed AS MATERIALIZED (SELECT id FROM facts WHERE {valid} AND"
                    f" embedding_dim = {dim} AND ((time_anchor >= %s AND time_anchor < %s) OR"
                    f" (valid_from >= %s AND valid_from < %s)) ORDER BY {vec} <=> {near}"
                    " LIMIT %s),")  # fmt: skip
        args += [*valid_args_, *query.window, *query.window, query.pool]
        channels.append("timed")
    union = " UNION ".join(f"SELECT id FROM {name}" for name in channels)
    keyword = "k.bm25" if "keyword" in channels else "NULL::float8"
    timed = "t.id IS NOT NULL" if "timed" in channels else "false"
    sql = (
        "WITH " + "".join(ctes) + f" candidates AS ({union})"
        f" SELECT f.id, f.subject_entity_id, f.last_seen_at::text, 1 - (f.{vec} <=> {near}),"
        f" (d.id IS NOT NULL OR f.subject_entity_id = ANY(%s::uuid[])), {keyword}, {timed},"
        # half precision is plenty to tell paraphrases apart, and half the bytes to send
        " halfvec_send(f.embedding::halfvec) FROM candidates c JOIN facts f ON f.id = c.id"
        " AND f.user_id = %s LEFT JOIN dense d ON d.id = c.id"
        + (" LEFT JOIN keyword k ON k.id = c.id" if "keyword" in channels else "")
        + (" LEFT JOIN timed t ON t.id = c.id" if "timed" in channels else "")
    )
    args += [boost_ids, user_id]
    pool = max(ef_search, candidate_pool(query.pool))
    return [(_SETTINGS, [str(pool)]), (sql, args)]


def _fetch(as_of: bool, private: bool, dim: int, valid: list[Any]) -> tuple[str, list[Any]]:
    """The facts holding a fetching term, as (id, terms): now, from the narrow
    ``fact_keywords`` rows; as of a past moment, from the facts themselves."""
    if as_of:
        where = valid_sql(as_of, private, "f.")
        return (
            "SELECT f.id, f.terms FROM facts f WHERE f.terms && (SELECT terms FROM fetching)"
            f" AND {where} AND f.embedding_dim = {dim}",
            valid,
        )
    return (
        "SELECT k.fact_id AS id, k.terms FROM fact_keywords k"
        " WHERE k.terms && (SELECT terms FROM fetching) AND k.user_id = %s"
        " AND k.embedding_model = %s AND (k.expires_at IS NULL OR k.expires_at > %s)"
        f" AND k.embedding_dim = {dim}" + (" AND k.sensitivity <> 'high'" if private else ""),
        valid,  # user, model, now
    )


def recall(
    db: Database, keys: KeyRing, user_id: str, query: RecallQuery, now: datetime,
    ef_search: int = 200,
) -> list[RecallCandidate]:  # fmt: skip
    if not query.embedding:
        return []
    hashes = sorted(set(keys.cipher_for(user_id).term_hashes(query.terms)))
    with db.transaction() as cur:
        for sql, args in recall_statements(user_id, query, now, hashes, ef_search):
            cur.execute(sql, args)
        rows = cur.fetchall()
    rate, boosted = decay_rate(query.half_life_days), set(uuids(query.boost_subject_ids))
    found = []
    for fact_id, subject, last_seen, similarity, in_dense, bm25, in_window, embedding in rows:
        age = max((now - datetime.fromisoformat(last_seen)).total_seconds(), 0.0)
        dense = float(similarity) * math.exp(-rate * age)
        dense += query.boost if subject is not None and str(subject) in boosted else 0.0
        found.append(
            RecallCandidate(
                fact_id=str(fact_id),
                similarity=float(similarity),
                dense_score=dense if in_dense else None,
                keyword_score=None if bm25 is None else float(bm25),
                embedding=as_vector(embedding, half=True),
                in_window=bool(in_window),
            )
        )
    return found
