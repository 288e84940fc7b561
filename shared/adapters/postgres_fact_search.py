"""Retrieval over the ``facts`` table: semantic (HNSW), exact nearest, temporal window.

``search``: the per-dimension partial HNSW index (``embedding::vector(N)``, ``WHERE
embedding_dim = N AND valid_to IS NULL``) yields the nearest current facts of the user. With
pgvector 0.8 iterative scans (``hnsw.iterative_scan = relaxed_order``) the index keeps
scanning until enough rows pass the per-user, model and privacy filters, so a user among many
still gets a full candidate pool. The facts about the turn's boosted entities are added
exactly (a btree look-up), so a boost can lift a fact the index pool did not reach. Then, in
the same statement::

    score = similarity * exp(-ln 2 * age(last_seen_at) / half_life) + boost (if boosted)

filtered by ``min_similarity`` and ordered by score: recency decay is inline, no batch job.
A fact past its ``expires_at`` is left out at once, before the expiry job closes it.
Relaxed ordering may return the pool slightly out of distance order; the re-ranking by score
makes that irrelevant. The distance filter sits outside the materialised CTE, as pgvector
recommends.

The planner chooses: a user with few facts among many is answered exactly from their rows
(btree on user_id, distances computed, no index); a user with many, by the HNSW index.
``hnsw.ef_search = 200`` (``bench/retrieval.py``: recall@10 0.99 at 100k facts of one user,
p95 10-15 ms on the test stack).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pgvector import Vector

from shared.adapters.fact_rules import candidate_pool, decay_rate, uuids
from shared.adapters.postgres import Database
from shared.adapters.postgres_memory_rows import FACT_COLUMNS, fact_from_row
from shared.models.memory import Fact, ScoredFact, SemanticQuery, TemporalQuery
from shared.ports import KeyRing

_PRIVATE = " AND sensitivity <> 'high'"


def search_sql(dim: int, private: bool) -> str:
    vec = f"embedding::vector({dim})"
    where = (
        f"user_id = %s AND embedding_dim = {dim} AND valid_to IS NULL AND embedding_model = %s"
        " AND (expires_at IS NULL OR expires_at > %s)" + (_PRIVATE if private else "")
    )
    return (
        f"WITH nearest AS MATERIALIZED ("
        f" SELECT id, {vec} <=> %s::vector({dim}) AS distance FROM facts WHERE {where}"
        f" ORDER BY distance LIMIT %s),"
        f" boosted AS (SELECT id, {vec} <=> %s::vector({dim}) AS distance FROM facts WHERE {where}"
        f" AND subject_entity_id = ANY(%s::uuid[])),"
        f" candidates AS (SELECT id, distance FROM nearest"
        f" UNION SELECT id, distance FROM boosted),"
        f" scored AS (SELECT f.*, 1 - c.distance AS similarity"
        f" FROM candidates c JOIN facts f ON f.id = c.id AND f.user_id = %s)"
        f" SELECT {FACT_COLUMNS}, similarity,"
        f" similarity * exp(-%s::float8"
        f" * greatest(extract(epoch FROM %s::timestamptz - last_seen_at), 0))"
        f" + CASE WHEN subject_entity_id = ANY(%s::uuid[]) THEN %s::float8 ELSE 0 END AS score"
        f" FROM scored WHERE similarity >= %s::float8 ORDER BY score DESC, id LIMIT %s"
    )


def search_statements(
    user_id: str, query: SemanticQuery, now: datetime, ef_search: int
) -> list[tuple[str, list[Any]]]:
    """What ``search`` runs in its transaction: the transaction-local index settings (one
    round trip), then the search itself."""
    vector, pool, boost_ids = (
        Vector(query.embedding),
        candidate_pool(query.limit),
        uuids(query.boost_subject_ids),
    )
    # The index scan's estimated cost (millions at 1M facts) would trigger JIT compilation
    # where the server has it (tens of ms per query, to save microseconds): off.
    settings = (
        "SELECT set_config('hnsw.ef_search', %s, true),"
        " set_config('hnsw.iterative_scan', 'relaxed_order', true),"
        " set_config('jit', 'off', true)"
    )
    args: list[Any] = [
        *(vector, user_id, query.embedding_model, now, pool),  # nearest
        *(vector, user_id, query.embedding_model, now, boost_ids),  # boosted
        user_id,  # scored
        *(decay_rate(query.half_life_days), now, boost_ids, query.boost),  # score
        *(query.min_similarity, query.limit),
    ]
    return [
        (settings, [str(max(ef_search, pool))]),
        (search_sql(len(query.embedding), query.privacy_mode), args),
    ]


class FactSearch:
    def __init__(self, db: Database, keys: KeyRing, *, ef_search: int = 200) -> None:
        self._db = db
        self._keys = keys
        self._ef_search = int(ef_search)

    def search(self, user_id: str, query: SemanticQuery, now: datetime) -> list[ScoredFact]:
        if not query.embedding:
            return []
        with self._db.transaction() as cur:
            for sql, args in search_statements(user_id, query, now, self._ef_search):
                cur.execute(sql, args)
            rows = cur.fetchall()
        return self._scored(user_id, rows)

    def nearest(
        self, user_id: str, embedding: Sequence[float], embedding_model: str, limit: int
    ) -> list[ScoredFact]:
        """Exact: ``embedding <=> q`` is not the indexed expression, so no index answers it;
        the user's current facts of this model and dimension are all compared."""
        if not embedding or limit < 1:
            return []
        vector = Vector(list(embedding))
        with self._db.transaction() as cur:
            cur.execute(
                f"SELECT {FACT_COLUMNS}, 1 - (embedding <=> %s) AS similarity FROM facts"
                " WHERE user_id = %s AND valid_to IS NULL AND embedding_model = %s"
                " AND embedding_dim = %s ORDER BY embedding <=> %s, id LIMIT %s",
                (vector, user_id, embedding_model, len(embedding), vector, limit),
            )
            rows = [(*row, row[-1]) for row in cur.fetchall()]  # score = similarity
        return self._scored(user_id, rows)

    def in_window(self, user_id: str, query: TemporalQuery) -> list[Fact]:
        start, end = _aware(query.start), _aware(query.end)
        within = "time_anchor >= %s AND time_anchor < %s"
        if query.stated:
            within = f"(({within}) OR (valid_from >= %s AND valid_from < %s))"
        where = f"user_id = %s AND valid_to IS NULL AND {within}"
        args: list[Any] = [user_id, start, end, *([start, end] if query.stated else [])]
        if query.at is not None:
            where += " AND (expires_at IS NULL OR expires_at > %s)"
            args.append(query.at)
        if query.privacy_mode:
            where += _PRIVATE
        if query.subject_ids is not None:
            where += (
                " AND (subject_entity_id = ANY(%s::uuid[]) OR (%s AND subject_entity_id IS NULL))"
            )
            args += [uuids(query.subject_ids), None in query.subject_ids]
        with self._db.transaction() as cur:
            cur.execute(
                f"SELECT {FACT_COLUMNS} FROM facts WHERE {where}"
                " ORDER BY coalesce(time_anchor, valid_from), created_at, id LIMIT %s",
                [*args, query.limit],
            )
            rows = cur.fetchall()
        if not rows:
            return []
        cipher = self._keys.cipher_for(user_id)
        return [fact_from_row(cipher, row) for row in rows]

    def _scored(self, user_id: str, rows: Sequence[Sequence[Any]]) -> list[ScoredFact]:
        if not rows:
            return []
        cipher = self._keys.cipher_for(user_id)
        return [
            ScoredFact(
                fact=fact_from_row(cipher, row[:-2]),
                similarity=float(row[-2]),
                score=float(row[-1]),
            )
            for row in rows
        ]


def _aware(value: datetime) -> datetime:
    """A bound without a time zone is taken as UTC."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
