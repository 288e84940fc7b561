"""Retrieval: latency of ``PostgresFactStore.search`` (today's search) and of the hybrid
retrieval (``bench/retrieval_latency.py``) in the same run, recall@10 of the HNSW index; and,
with ``--quality``, recall@1/5/10 of every retrieval step on a dataset.

Per size: synthetic facts are bulk-loaded (binary COPY; texts really encrypted, vectors as
pgvector's binary format) into the real ``facts`` table of a scratch database
``bench_retrieval`` built by the migrations, the migration's HNSW index is rebuilt over them,
then ``--queries`` searches run through the adapter. Recall@10 compares the index's top 10
(decay off, so the score is the similarity) with exact top 10 computed in numpy on the same
float32 vectors; the keyword channel's recall@10 compares its top 10 with exact BM25 over
every fact (``bench/retrieval_keyword.py``). The scratch database is dropped at the end.

Vectors: 768 dimensions, unit length, clustered like text embeddings (low intrinsic
dimension): ``centre (1 of 256) + 0.8 * (offset in a shared 16-dim subspace) + 0.1 * isotropic
noise``, normalised; queries are fresh draws from the same distribution (mean cosine to the
nearest fact 0.87, to the 10th 0.80, to the 100th 0.69). Harder, flatter data (64-dim
offsets, 0.3 noise: 0.72 / 0.68 / 0.62) measured recall@10 0.992 at 100k facts with
ef_search 100 (0.926 at 40).

    .venv/bin/python -m bench.retrieval [--sizes 10000,100000] [--queries 200]
        [--ef-search N] [--m N --ef-construction N] [--million [--users 1000]]
    .venv/bin/python -m bench.retrieval --quality [--dataset eval/data/own.locomo.json]
        [--embedder local|hash] [--reranker identity|vertex]

``--quality``: recall@1/5/10 of each retrieval step on a dataset in the LoCoMo layout, in
one run (see ``bench/retrieval_quality.py``); the project's own dataset by default, or
several comma-separated datasets pooled into one table.

``--million``: 1,000,000 facts across ``--users`` users, one of whom holds 100,000 (the
index must skip the other 90%: iterative scans) while the others hold ~900 each (answered
exactly from their own rows); measured for that user and three others. Slow: building the
index takes 8-10 minutes on two cores.
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import numpy as np

from bench import retrieval_quality
from bench.retrieval_data import MODEL, NOW, Corpus, copy_facts
from bench.retrieval_keyword import keyword_recall
from bench.retrieval_latency import hybrid_latency, statement_latency
from bench.retrieval_quality import CachedEmbedder
from shared.adapters.keyring_local import LocalKek
from shared.adapters.local_embedder import LocalEmbedder
from shared.adapters.migrations import apply_migrations
from shared.adapters.postgres import Database, connect
from shared.adapters.postgres_fact_search import search_statements
from shared.adapters.postgres_facts import PostgresFactStore
from shared.adapters.postgres_keyring import PostgresKeyRing
from shared.adapters.postgres_sessions import PostgresSessionMemory
from shared.adapters.rerankers import IdentityReranker, VertexReranker
from shared.config import Settings
from shared.crypto import new_data_key
from shared.fakes.scripted_llm import HashEmbedder
from shared.models.memory import SemanticQuery
from shared.ports import Embedder, Reranker
from testkit.stack_env import STACK_ENV, load_stack_env

DB_NAME = "bench_retrieval"
INDEX = "facts_embedding_768_idx"


# -- measuring ------------------------------------------------------------------------------
def _query(vector: np.ndarray, decay: bool) -> SemanticQuery:
    return SemanticQuery(
        embedding=vector.tolist(), embedding_model=MODEL, limit=10, min_similarity=-1.0,
        half_life_days=180.0 if decay else 0.0,
    )  # fmt: skip


def measure(store: PostgresFactStore, user: str, queries: np.ndarray, exact: np.ndarray,
            ids: list[str]) -> dict[str, float]:  # fmt: skip
    """p50/p95 of search with decay on; recall@10 with decay off (score = similarity)."""
    for q in queries[:20]:  # warm the caches
        store.search(user, _query(q, decay=True), NOW)
    timings, recalls = [], []
    for q, truth in zip(queries, exact, strict=True):
        started = time.perf_counter()
        store.search(user, _query(q, decay=True), NOW)
        timings.append((time.perf_counter() - started) * 1000)
        found = {s.fact.id for s in store.search(user, _query(q, decay=False), NOW)}
        recalls.append(len(found & {ids[j] for j in truth}) / 10)
    cuts = statistics.quantiles(timings, n=100)
    return {"p50": cuts[49], "p95": cuts[94], "recall": statistics.fmean(recalls)}


def exact_top10(vectors: np.ndarray, queries: np.ndarray) -> np.ndarray:
    return np.argsort(-(queries @ vectors.T), axis=1)[:, :10]


def plan_of(db: Database, user: str, query: np.ndarray, ef_search: int) -> str:
    (settings, setting_args), (sql, args) = search_statements(
        user, _query(query, decay=True), NOW, ef_search
    )
    with db.transaction() as cur:
        cur.execute(settings, setting_args)
        cur.execute("EXPLAIN " + sql, args)
        plan = " ".join(str(row[0]) for row in cur.fetchall())
    if INDEX in plan:
        return "plan: HNSW index, iterative scan"
    if "Seq Scan on facts" in plan:
        return "plan: sequential scan"
    return "plan: the user's rows by btree, exact distances"


# -- the scratch database ---------------------------------------------------------------------
def _admin(settings: Settings, sql: str) -> None:
    conn: Any = connect(settings)
    try:
        conn.autocommit = True
        conn.cursor().execute(sql)
    finally:
        conn.close()


@contextmanager
def scratch_database(settings: Settings) -> Iterator[Settings]:
    assert settings.database_url, "DATABASE_URL is not set (is the stack up?)"
    _admin(settings, f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")
    _admin(settings, f"CREATE DATABASE {DB_NAME}")
    try:
        base = settings.database_url.rsplit("/", 1)[0]
        yield settings.model_copy(update={"database_url": f"{base}/{DB_NAME}"})
    finally:
        _admin(settings, f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")


class Bench:
    def __init__(self, settings: Settings, args: argparse.Namespace, kek_file: Path) -> None:
        self.conn: Any = connect(settings, timeout=7200)  # index builds take minutes
        apply_migrations(self.conn)
        cur = self.conn.cursor()
        cur.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", (INDEX,))
        self.index_sql = _with_options(str(cur.fetchone()[0]), args.m, args.ef_construction)
        self.conn.commit()
        self.db = Database(settings)
        self.keys = PostgresKeyRing(self.db, LocalKek(kek_file))
        self.store = PostgresFactStore(self.db, self.keys, ef_search=args.ef_search)
        self.sessions = PostgresSessionMemory(self.db, self.keys)
        self.args = args

    def reset(self) -> None:
        self.conn.cursor().execute(
            "TRUNCATE facts, persons, pending_items, fact_terms, fact_term_totals;"
            f" DROP INDEX IF EXISTS {INDEX}"
        )
        self.conn.commit()

    def copy(self, users: dict[str, tuple[np.ndarray, list[str]]]) -> dict[str, list[str]]:
        return {
            u: copy_facts(self.conn, self.keys.cipher_for(u), u, vectors, texts)
            for u, (vectors, texts) in users.items()
        }

    def build_index(self) -> float:
        started = time.perf_counter()
        self.conn.autocommit = True
        cur = self.conn.cursor()
        cur.execute("SET maintenance_work_mem = '6GB'")
        cur.execute("SET max_parallel_maintenance_workers = 2")
        cur.execute(self.index_sql)
        built = time.perf_counter() - started
        cur.execute("VACUUM ANALYZE facts")
        self.conn.autocommit = False
        return built

    def load(self, users: dict[str, tuple[np.ndarray, list[str]]]) -> dict[str, list[str]]:
        started = time.perf_counter()
        ids = self.copy(users)
        loaded = time.perf_counter() - started
        built = self.build_index()
        total = sum(len(v) for v, _ in users.values())
        print(f"  loaded {total:,} facts in {loaded:.1f} s (COPY, encrypted texts); "
              f"HNSW index built in {built:.1f} s")  # fmt: skip
        return ids

    def report(
        self,
        label: str,
        user: str,
        vectors: np.ndarray,
        ids: list[str],
        queries: tuple[np.ndarray, list[str]],
    ) -> None:
        result = measure(self.store, user, queries[0], exact_top10(vectors, queries[0]), ids)
        plan = plan_of(self.db, user, queries[0][0], self.args.ef_search)
        print(
            f"  {label}: p50 {result['p50']:.1f} ms, p95 {result['p95']:.1f} ms,"
            f" recall@10 {result['recall']:.3f} ({self.args.queries} queries, {plan})"
        )
        hybrid = hybrid_latency(self.store, self.sessions, user, *queries)
        print(
            f"  hybrid recall: p50 {hybrid['p50']:.1f} ms, p95 {hybrid['p95']:.1f} ms"
            f" ({hybrid['p95'] / result['p95']:.2f}x today's p95; target <= 2x, p95 < 20 ms)"
        )
        statements = statement_latency(self.db, self.keys, user, *queries)
        print("  the recall's transaction alone: " + ", ".join(
            f"{name} p50 {cut['p50']:.1f} ms, p95 {cut['p95']:.1f} ms"
            for name, cut in statements.items()))  # fmt: skip


def _with_options(index_sql: str, m: int | None, ef_construction: int | None) -> str:
    if m is not None:
        index_sql = re.sub(r"m='?\d+'?", f"m='{m}'", index_sql)
    if ef_construction is not None:
        index_sql = re.sub(
            r"ef_construction='?\d+'?", f"ef_construction='{ef_construction}'", index_sql
        )
    return index_sql


def _single_user(bench: Bench, size: int) -> None:
    print(f"{size:,} facts, one user")
    bench.reset()
    corpus = Corpus(seed=size)
    vectors, texts = corpus.sample(size), corpus.texts(size)
    ids = bench.load({"bench-user": (vectors, texts)})
    # same distribution, not in the table
    queries = (corpus.sample(bench.args.queries), corpus.texts(bench.args.queries))
    bench.report("search", "bench-user", vectors, ids["bench-user"], queries)
    found, asked = keyword_recall(bench.store, "bench-user", ids["bench-user"], texts, queries[1])
    print(f"  keyword channel: recall@10 {found:.3f} against exact BM25 over every fact"
          f" ({asked} questions with a matching term)")  # fmt: skip


def _many_users(bench: Bench, total: int, users: int) -> None:
    """One user holds a tenth of the table (the index must filter out the other 90%: iterative
    scans), the others share the rest (few facts each: an exact per-user scan is cheaper)."""
    big, corpus = total // 10, Corpus(seed=1)
    per_user = (total - big) // (users - 1)
    print(f"{total:,} facts across {users:,} users: one with {big:,}, the others {per_user:,}")
    bench.reset()
    names = [f"user-{i:05d}" for i in range(1, users)]
    measured = {"user-big", *names[:: max(len(names) // 3, 1)][:3]}
    kept: dict[str, tuple[np.ndarray, list[str]]] = {}
    started = time.perf_counter()
    batches = [{"user-big": (corpus.sample(big), corpus.texts(big))}] + [
        {name: (corpus.sample(per_user), corpus.texts(per_user)) for name in names[i : i + 100]}
        for i in range(0, len(names), 100)
    ]
    for batch in batches:
        loaded = bench.copy(batch)
        kept |= {u: (batch[u][0], loaded[u]) for u in batch if u in measured}
    copied = time.perf_counter() - started
    built = bench.build_index()
    print(f"  loaded {big + per_user * len(names):,} facts in {copied:.1f} s (COPY, encrypted"
          f" texts); HNSW index built in {built:.1f} s")  # fmt: skip
    queries = (corpus.sample(bench.args.queries), corpus.texts(bench.args.queries))
    for user in sorted(measured):
        vectors, fact_ids = kept[user]
        label = f"search for {user} ({len(fact_ids):,} facts)"
        bench.report(label, user, vectors, fact_ids, queries)


def quality(scratch: Settings, args: argparse.Namespace, kek_file: Path) -> None:
    conn: Any = connect(scratch)
    try:
        apply_migrations(conn)
    finally:
        conn.close()
    db = Database(scratch)
    keys = PostgresKeyRing(db, LocalKek(kek_file))
    facts, sessions = PostgresFactStore(db, keys), PostgresSessionMemory(db, keys)
    inner: Embedder = LocalEmbedder() if args.embedder == "local" else HashEmbedder(384)
    reranker: Reranker = (
        VertexReranker(scratch) if args.reranker == "vertex" else IdentityReranker()
    )
    embedder = CachedEmbedder(inner)
    try:
        conversations = [
            conversation
            for path in args.dataset.split(",")  # several: one pooled table
            for conversation in retrieval_quality.read_dataset(Path(path))
        ]
        questions = retrieval_quality.load(conversations, facts, sessions, embedder)
        print(f"dataset {args.dataset}; embedder {inner.model_name}; reranker {reranker.name}")
        table = retrieval_quality.measure(questions, facts, sessions, embedder, reranker)
        retrieval_quality.print_table(table, questions)
    finally:
        db.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--ef-search", type=int, default=200)
    parser.add_argument("--m", type=int)
    parser.add_argument("--ef-construction", type=int)
    parser.add_argument("--million", action="store_true")
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--env-file", default=STACK_ENV)
    parser.add_argument("--quality", action="store_true")
    parser.add_argument("--dataset", default=str(retrieval_quality.DEFAULT_DATASET))
    parser.add_argument("--embedder", choices=["local", "hash"], default="local")
    parser.add_argument("--reranker", choices=["identity", "vertex"], default="identity")
    args = parser.parse_args()
    load_stack_env(Path(args.env_file))
    settings = Settings()
    with tempfile.TemporaryDirectory() as tmp, scratch_database(settings) as scratch:
        kek_file = Path(tmp) / "kek.key"  # the scratch data dies with the run, and its key
        kek_file.write_bytes(new_data_key())
        if args.quality:
            quality(scratch, args, kek_file)
            return
        bench = Bench(scratch, args, kek_file)
        cur = bench.conn.cursor()
        cur.execute("SHOW shared_buffers")
        buffers = cur.fetchone()[0]
        bench.conn.commit()
        index = bench.index_sql.split(" USING ")[1]
        print(f"index: {index}; ef_search {args.ef_search}; server shared_buffers {buffers}")
        try:
            for size in [int(s) for s in args.sizes.split(",") if s]:
                _single_user(bench, size)
            if args.million:
                _many_users(bench, 1_000_000, args.users)
        finally:
            bench.db.close()
            with suppress(Exception):
                bench.conn.close()


if __name__ == "__main__":
    main()
