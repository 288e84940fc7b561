"""The hybrid retrieval's candidates on PostgreSQL: every channel in one statement, each a
CTE with its own limit, on one connection. Measured against the channels as two statements
on two connections at once (docs/evaluation.md): faster at p50 in every run, about even at
p95 (parallel backends win only while both cores are free), and one plan, one transaction
and no thread per recall.

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
Fusing and diversifying happen above, in ``services/memory/retrieval.py``. Each candidate
comes with its fact's row as JSON text, which the service parses and decrypts only for the
few it keeps (no second round trip, no work for the others).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from shared.adapters.fact_rules import (
    BM25_B,
    BM25_K1,
    FETCH_BUDGET,
    candidate_pool,
    decay_rate,
    uuids,
)
from shared.adapters.postgres import Database, as_vector
from shared.adapters.postgres_memory_rows import fact_from_json, fact_json_sql
from shared.adapters.postgres_prepared import Prepared, vector_text
from shared.models.memory import RecallQuery
from shared.ports import KeyRing, RecallCandidate, UserCipher


# The keyword channel's look-up is ``terms && <the fetching terms>``, known only when the
# statement runs: the planner cannot estimate it and, with many facts, scans every narrow
# row instead of the GIN index. Every table the statement reads has the index it needs, so
# sequential scans are off for this transaction.
def settings_sql(ef_search: int) -> list[str]:
    """Without parameters: they travel with the transaction's ``BEGIN``, one wait."""
    return [
        f"SET LOCAL hnsw.ef_search = {int(ef_search)}",
        "SET LOCAL hnsw.iterative_scan = relaxed_order",
        "SET LOCAL jit = off",
        "SET LOCAL enable_seqscan = off",
    ]


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
    " totals s WHERE (r.before = 0 OR r.before + r.docs <= %s)"
    " AND r.docs <= greatest(50, s.docs / 20)),"
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


Statement = tuple[list[str], str, list[Any]]  # a transaction: its settings, its statement


def recall_statement(
    user_id: str, query: RecallQuery, now: datetime, term_hashes: list[int], ef_search: int
) -> Statement:
    """Every channel in one statement, each a CTE with its own limit: the dense one (with
    the boosted and the temporal ones) always, the keyword one when the query has terms.
    Each candidate comes once, tagged with what each channel said of it. The query vector
    is sent once (an InitPlan parameter, which the HNSW scan takes as it takes a literal)."""
    as_of = query.as_of is not None
    valid_args_ = valid_args(user_id, query.embedding_model, query.as_of or now, as_of)
    boost_ids = uuids(query.boost_subject_ids)
    dim = len(query.embedding)
    ctes, args, channels = _dense(query, valid_args_, boost_ids)
    if term_hashes:
        fetch, fetch_args = _fetch(as_of, query.privacy_mode, dim, valid_args_)
        ctes.append(_KEYWORD.replace("{fetch}", fetch))
        args += [user_id, user_id, term_hashes, FETCH_BUDGET, *fetch_args,
                 BM25_K1 + 1, BM25_K1, BM25_B, BM25_B, query.pool]  # fmt: skip
        channels.append("keyword")
    union = " UNION ".join(f"SELECT id FROM {name}" for name in channels)
    joined = "".join(
        f" LEFT JOIN {name} {name[0]} ON {name[0]}.id = c.id"
        for name in ("dense", "keyword", "timed")
        if name in channels
    )
    sql = (
        "WITH " + "".join(ctes) + f" candidates AS ({union})"
        f" SELECT {_row_columns(dim)}, (d.id IS NOT NULL OR f.subject_entity_id ="
        " ANY(%s::uuid[])), "
        + ("k.bm25" if "keyword" in channels else "NULL::float8")
        + (", t.id IS NOT NULL" if "timed" in channels else ", false")
        + " FROM candidates c JOIN facts f ON f.id = c.id AND f.user_id = %s"
        + joined
    )
    pool = max(ef_search, candidate_pool(query.pool))
    return settings_sql(pool), sql, [*args, boost_ids, user_id]


def _dense(
    query: RecallQuery, valid_args_: list[Any], boost_ids: list[str]
) -> tuple[list[str], list[Any], list[str]]:
    """The dense channel's nearest, the boosted people's facts, the window's facts: their
    CTEs, parameters and names."""
    dim = len(query.embedding)
    vec, near = f"embedding::vector({dim})", "(SELECT v FROM q)"
    valid = valid_sql(query.as_of is not None, query.privacy_mode)
    ctes = [f"q AS MATERIALIZED (SELECT %s::vector({dim}) AS v),"]
    args: list[Any] = [vector_text(query.embedding)]
    ctes.append(f" dense AS MATERIALIZED (SELECT id FROM facts WHERE {valid} AND embedding_dim"
                f" = {dim} ORDER BY {vec} <=> {near} LIMIT %s),")  # fmt: skip
    args += [*valid_args_, query.pool]
    channels = ["dense"]
    if boost_ids:
        ctes.append(f" boosted AS (SELECT id FROM facts WHERE {valid} AND embedding_dim = {dim}"
                    " AND subject_entity_id = ANY(%s::uuid[]) ORDER BY last_seen_at DESC"
                    " LIMIT %s),")  # fmt: skip
        args += [*valid_args_, boost_ids, query.pool]
        channels.append("boosted")
    if query.window is not None:
        ctes.append(f" timed AS MATERIALIZED (SELECT id FROM facts WHERE {valid} AND"
                    f" embedding_dim = {dim} AND ((time_anchor >= %s AND time_anchor < %s) OR"
                    f" (valid_from >= %s AND valid_from < %s)) ORDER BY {vec} <=> {near}"
                    " LIMIT %s),")  # fmt: skip
        args += [*valid_args_, *query.window, *query.window, query.pool]
        channels.append("timed")
    return ctes, args, channels


def _row_columns(dim: int) -> str:
    return (
        f"f.id, f.subject_entity_id, f.last_seen_at::text,"
        f" 1 - (f.embedding::vector({dim}) <=> (SELECT v FROM q)),"
        # half precision is plenty to tell paraphrases apart, and half the bytes to send
        f" halfvec_send(f.embedding::halfvec), {fact_json_sql('f.')}"
    )


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
    """One transaction of one statement (``recall_statement``), prepared once per pooled
    connection (``postgres_prepared``)."""
    if not query.embedding:
        return []
    cipher = keys.cipher_for(user_id)
    hashes = sorted(set(cipher.term_hashes(query.terms)))
    rows = statement_rows(db, recall_statement(user_id, query, now, hashes, ef_search))
    return _candidates(cipher, rows, query, now)


def statement_rows(db: Database, statement: Statement) -> list[Any]:
    """The statement's rows, its settings local to its transaction."""
    settings, sql, args = statement
    with db.connection() as conn:
        return Prepared(conn, settings).rows(sql, args)


def _candidates(
    cipher: UserCipher, rows: Iterable[Any], query: RecallQuery, now: datetime
) -> list[RecallCandidate]:
    rate, boosted = decay_rate(query.half_life_days), set(uuids(query.boost_subject_ids))
    found = []
    for row in rows:
        fact_id, subject, last_seen, similarity, embedding, fact, in_dense, bm25, in_window = row
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
                read=functools.partial(fact_from_json, cipher, fact),
            )
        )
    return found
