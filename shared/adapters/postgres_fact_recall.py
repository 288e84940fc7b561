"""The hybrid retrieval's candidates on PostgreSQL, both channels in one statement.

- **dense**: the nearest current facts by the partial HNSW index (as ``search`` does, with
  iterative scans), plus the facts about the turn's boosted people;
- **temporal** (when the query has a window): the facts about, or first stated in, it,
  nearest first;
- **keyword**: BM25 over the blind index. The query's terms arrive as keyed hashes; their
  per-user document frequencies come from ``fact_terms`` (kept by triggers), the GIN index
  on ``facts.terms`` fetches the facts holding any of the query's *rarer* terms
  (``fact_rules.rare_enough``), and every query term then scores them.

"As of" a past moment (``query.as_of``) reads the versions valid then (``valid_from <= t <
valid_to``, not yet expired), from the user's rows without the indexes, which cover current
facts only; the term statistics are today's, an approximation the ranking tolerates.
Decrypting, fusing and diversifying happen above, in ``services/memory/retrieval.py``.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from pgvector import Vector

from shared.adapters.fact_rules import BM25_B, BM25_K1, candidate_pool, decay_rate, uuids
from shared.adapters.postgres import Database, as_floats
from shared.adapters.postgres_memory_rows import FACT_COLUMNS, fact_from_row
from shared.models.memory import RecallQuery
from shared.ports import KeyRing, RecallCandidate

_SETTINGS = (
    "SELECT set_config('hnsw.ef_search', %s, true),"
    " set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('jit', 'off', true)"
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


def recall_sql(dim: int, as_of: bool, private: bool) -> str:
    vec, valid = f"embedding::vector({dim})", valid_sql(as_of, private)
    kw = valid_sql(as_of, private, "f.")
    return (
        "WITH dense AS MATERIALIZED ("
        f" SELECT id FROM facts WHERE {valid} AND embedding_dim = {dim}"
        f" ORDER BY {vec} <=> %s::vector({dim}) LIMIT %s),"
        f" boosted AS (SELECT id FROM facts WHERE {valid} AND embedding_dim = {dim}"
        " AND subject_entity_id = ANY(%s::uuid[]) ORDER BY last_seen_at DESC LIMIT %s),"
        " totals AS (SELECT docs, length FROM fact_term_totals WHERE user_id = %s),"
        " idf AS (SELECT t.term, t.docs, ln(1 + (s.docs - t.docs + 0.5) / (t.docs + 0.5)) AS idf"
        " FROM fact_terms t, totals s WHERE t.user_id = %s AND t.term = ANY(%s::bigint[])"
        " AND t.docs > 0),"
        " fetching AS (SELECT coalesce(array_agg(i.term), '{}') AS terms FROM idf i, totals s"
        " WHERE i.docs <= greatest(50, s.docs / 20)),"
        " keyword AS MATERIALIZED (SELECT f.id, sum(i.idf * tf.n * %s::float8 / (tf.n"
        " + %s::float8 * (1 - %s::float8 + %s::float8 * cardinality(f.terms)"
        " / (s.length::float8 / s.docs)))) AS bm25"
        " FROM facts f CROSS JOIN totals s"
        " CROSS JOIN LATERAL (SELECT u.term, count(*) AS n FROM unnest(f.terms) u(term)"
        " GROUP BY u.term) tf JOIN idf i ON i.term = tf.term"
        f" WHERE f.terms && (SELECT terms FROM fetching) AND {kw} AND f.embedding_dim = {dim}"
        " GROUP BY f.id ORDER BY bm25 DESC, f.id LIMIT %s),"
        f" timed AS MATERIALIZED (SELECT id FROM facts WHERE {valid} AND embedding_dim = {dim}"
        " AND ((time_anchor >= %s AND time_anchor < %s) OR (valid_from >= %s AND valid_from < %s))"
        f" ORDER BY {vec} <=> %s::vector({dim}) LIMIT %s),"
        " candidates AS (SELECT id FROM dense UNION SELECT id FROM boosted"
        " UNION SELECT id FROM keyword UNION SELECT id FROM timed)"
        f" SELECT {_COLUMNS}, 1 - (f.{vec} <=> %s::vector({dim})),"
        " (d.id IS NOT NULL OR f.subject_entity_id = ANY(%s::uuid[])), k.bm25,"
        " t.id IS NOT NULL, f.embedding"
        " FROM candidates c JOIN facts f ON f.id = c.id AND f.user_id = %s"
        " LEFT JOIN dense d ON d.id = c.id LEFT JOIN keyword k ON k.id = c.id"
        " LEFT JOIN timed t ON t.id = c.id"
    )


_COLUMNS = ", ".join(f"f.{c.strip()}" for c in FACT_COLUMNS.split(","))


def recall_statements(
    user_id: str, query: RecallQuery, now: datetime, term_hashes: list[int], ef_search: int
) -> list[tuple[str, list[Any]]]:
    moment = query.as_of or now
    valid = valid_args(user_id, query.embedding_model, moment, query.as_of is not None)
    vector, boost_ids = Vector(query.embedding), uuids(query.boost_subject_ids)
    args: list[Any] = [
        *valid, vector, query.pool,  # dense
        *valid, boost_ids, query.pool,  # boosted
        user_id, user_id, term_hashes,  # totals, idf
        BM25_K1 + 1, BM25_K1, BM25_B, BM25_B, *valid, query.pool,  # keyword
        *valid, *_window(query), *_window(query), vector, query.pool if query.window else 0,
        vector, boost_ids, user_id,  # the candidates' rows
    ]  # fmt: skip
    pool = max(ef_search, candidate_pool(query.pool))
    sql = recall_sql(len(query.embedding), query.as_of is not None, query.privacy_mode)
    return [(_SETTINGS, [str(pool)]), (sql, args)]


def _window(query: RecallQuery) -> tuple[datetime | None, datetime | None]:
    return query.window or (None, None)


def recall(
    db: Database, keys: KeyRing, user_id: str, query: RecallQuery, now: datetime,
    ef_search: int = 200,
) -> list[RecallCandidate]:  # fmt: skip
    if not query.embedding:
        return []
    cipher = keys.cipher_for(user_id)
    hashes = sorted(set(cipher.term_hashes(query.terms)))
    with db.transaction() as cur:
        for sql, args in recall_statements(user_id, query, now, hashes, ef_search):
            cur.execute(sql, args)
        rows = cur.fetchall()
    rate, boosted = decay_rate(query.half_life_days), set(uuids(query.boost_subject_ids))
    found = []
    for row in rows:
        fact = fact_from_row(cipher, row[:-5])
        similarity, in_dense, bm25, in_window, embedding = row[-5:]
        age = max((now - fact.last_seen_at).total_seconds(), 0.0)
        dense = float(similarity) * math.exp(-rate * age)
        dense += query.boost if fact.subject_entity_id in boosted else 0.0
        found.append(
            RecallCandidate(
                fact=fact,
                similarity=float(similarity),
                dense_score=dense if in_dense else None,
                keyword_score=None if bm25 is None else float(bm25),
                embedding=as_floats(embedding),
                in_window=bool(in_window),
            )
        )
    return found
