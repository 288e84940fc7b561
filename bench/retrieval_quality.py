"""Retrieval quality: recall@1/5/10 of each retrieval step on a dataset in the LoCoMo layout.

Each conversation becomes one user of a scratch PostgreSQL database (the real schema, the
real adapters): its observations are stored as facts, dated by their session (``valid_from``)
and anchored when they name a day, its session summaries as session memory. Then every
question is asked of each configuration in the same run, with the question's ``context``
messages as the recent conversation, at the day after the last session:

- **today's search**: ``FactStore.search`` as the product had it (HNSW, threshold 0.35,
  recency decay), the baseline the issue measured;
- **dense only**, **keyword only**, **hybrid** (dense + keyword + temporal window, fused by
  reciprocal rank), **+ understanding** (references resolved, the question's time window),
  **+ MMR**, **+ sessions** (running summaries as a channel), **+ rerank** (the configured
  ``Reranker``: identity offline, so it equals the row above).

A question counts as found at k when one of its evidence messages stated a fact in the top
k (``source.message_id`` is the dia id); a session summary counts for the session of its
evidence (only in the rows with sessions: a summary is coarser than a fact, and the table
keeps the two apart). Never tune on a public benchmark: run it on ours.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from shared.models.memory import ExtractionChanges, FactDraft, SemanticQuery, SessionNote, Source
from shared.ports import Embedder, EmbedTask, FactStore, Reranker, SessionMemory
from shared.services.memory.retrieval import Channels, RecallRequest, Retriever
from testkit.locomo import evidence_ids, split_ids

DEFAULT_DATASET = Path(__file__).resolve().parent.parent / "eval" / "data" / "own.locomo.json"
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (1, 5, 10)
_OFF = {"keyword": False, "temporal": False, "sessions": False, "understanding": False,
        "rerank": False, "mmr": False, "decay": False}  # fmt: skip
_HYBRID = _OFF | {"keyword": True, "temporal": True}
CONFIGS: list[tuple[str, Channels | None]] = [
    ("today's search", None),
    ("dense + decay", Channels(**(_OFF | {"decay": True}))),
    ("dense only", Channels(**_OFF)),
    ("keyword only", Channels(**(_OFF | {"dense": False, "keyword": True}))),
    ("hybrid", Channels(**_HYBRID)),
    ("+ understanding", Channels(**(_HYBRID | {"understanding": True}))),
    ("+ MMR 0.7", Channels(**(_HYBRID | {"understanding": True, "mmr": True,
                                        "mmr_lambda": 0.7}))),
    ("+ MMR 0.9", Channels(**(_HYBRID | {"understanding": True, "mmr": True}))),
    ("+ sessions", Channels(**(_HYBRID | {"understanding": True, "mmr": True,
                                         "sessions": True}))),
    ("+ rerank", Channels(**(_HYBRID | {"understanding": True, "mmr": True, "sessions": True,
                                       "rerank": True}))),
    ("product defaults", Channels()),
]  # fmt: skip


@dataclass(frozen=True)
class Question:
    user: str
    text: str
    evidence: frozenset[str]
    category: int
    context: tuple[str, ...]
    asked_at: datetime


class CachedEmbedder:
    """The bench's embedder, memoised: every configuration embeds the same texts."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.model_name = inner.model_name
        self._cache: dict[str, list[float]] = {}

    def embed(
        self, texts: Sequence[str], task: EmbedTask = "RETRIEVAL_DOCUMENT"
    ) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            self._cache.update(zip(missing, self._inner.embed(missing), strict=True))
        return [self._cache[t] for t in texts]


def session_dates(conversation: dict[str, Any]) -> dict[int, datetime]:
    dates = {}
    for key, value in conversation.items():
        if key.startswith("session_") and key.endswith("_date_time"):
            number = int(key.split("_")[1])
            dates[number] = datetime.strptime(value, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    return dates


def load(
    samples: list[dict[str, Any]], facts: FactStore, sessions: SessionMemory, embedder: Embedder
) -> list[Question]:
    questions = []
    for sample in samples:
        user = f"quality-{sample['sample_id']}"
        dates = session_dates(sample["conversation"])
        for number, when in sorted(dates.items()):
            observed = sample["observation"].get(f"session_{number}_observation", {})
            rows = [row for rows in observed.values() for row in rows]
            store_session(facts, user, number, when, rows, embedder)
            summary = sample.get("session_summary", {}).get(f"session_{number}_summary")
            if summary:
                until = when + timedelta(hours=1)
                note = SessionNote(
                    chat_id=f"session_{number}", summary=summary, started_at=when,
                    covers_until=until,
                )  # fmt: skip
                [vector] = embedder.embed([summary])
                sessions.put_summary(user, note, vector, embedder.model_name)
        asked = max(dates.values()) + timedelta(days=1)
        for qa in sample["qa"]:
            if qa.get("category") not in CATEGORY_NAMES:
                continue  # adversarial questions have no evidence to find
            questions.append(
                Question(user, qa["question"], frozenset(qa.get("evidence", [])), qa["category"],
                         tuple(qa.get("context", [])), asked)
            )  # fmt: skip
    return questions


def store_session(
    facts: FactStore,
    user: str,
    number: int,
    when: datetime,
    rows: list[list[Any]],  # [text, dia id or a list of them, date?]
    embedder: Embedder,
) -> None:
    texts = [row[0][:200] for row in rows]
    ids = [evidence_ids(row[1]) for row in rows]
    vectors = embedder.embed(texts) if texts else []
    drafts = [
        FactDraft(
            text=text,
            confidence=0.9,
            embedding=vector,
            embedding_model=embedder.model_name,
            idempotency_key=f"{key}:{text}"[:200],
            time_anchor=datetime.fromisoformat(row[2]).replace(tzinfo=UTC)
            if len(row) > 2
            else None,
            source=Source(chat_id=f"session_{number}", message_id=key),
        )
        for row, text, vector, key in zip(rows, texts, vectors, ids, strict=True)
    ]
    changes = ExtractionChanges(new_facts=drafts)
    facts.apply_extraction(f"quality-{user}-{number}", user, changes, when)


def found_at(keys: list[str], question: Question, with_sessions: bool) -> int | None:
    """The rank (1-based) of the first retrieved item that holds the evidence."""
    sessions = {f"session:session_{e.split(':')[0][1:]}" for e in question.evidence}
    for rank, key in enumerate(keys, start=1):
        if set(split_ids(key)) & question.evidence or (with_sessions and key in sessions):
            return rank
    return None


def measure(
    questions: list[Question],
    facts: FactStore,
    sessions: SessionMemory,
    embedder: Embedder,
    reranker: Reranker,
) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    for name, channels in CONFIGS:
        ask = _asker(name, channels, facts, sessions, embedder, reranker)
        ranks, by_category = [], defaultdict(list)
        for question in questions:
            rank = found_at(ask(question), question, channels is not None and channels.sessions)
            ranks.append(rank)
            by_category[question.category].append(rank)
        table[name] = {
            **{f"r@{k}": _recall(ranks, k) for k in KS},
            "categories": {CATEGORY_NAMES[c]: _recall(r, 10) for c, r in by_category.items()},
        }
    return table


def _asker(
    name: str,
    channels: Channels | None,
    facts: FactStore,
    sessions: SessionMemory,
    embedder: Embedder,
    reranker: Reranker,
) -> Callable[[Question], list[str]]:
    if channels is None:  # today's search

        def search(question: Question) -> list[str]:
            [vector] = embedder.embed([question.text])
            query = SemanticQuery(embedding=vector, embedding_model=embedder.model_name)
            found = facts.search(question.user, query, question.asked_at)
            return [s.fact.source.message_id or "" for s in found]

        return search
    retriever = Retriever(facts, embedder, reranker, sessions, channels)

    def recall(question: Question) -> list[str]:
        request = RecallRequest(question=question.text, recent=question.context, limit=10)
        result = retriever.recall(question.user, request, question.asked_at)
        return [
            item.fact.source.message_id or "" if item.fact else item.key for item in result.items
        ]

    return recall


def _recall(ranks: Sequence[int | None], k: int) -> float:
    return (
        statistics.fmean(1.0 if r is not None and r <= k else 0.0 for r in ranks) if ranks else 0.0
    )


def print_table(table: dict[str, dict[str, Any]], questions: list[Question]) -> None:
    counts = defaultdict(int)
    for q in questions:
        counts[CATEGORY_NAMES[q.category]] += 1
    categories = sorted(counts)
    header = f"{'configuration':<18}" + "".join(f"{'r@' + str(k):>7}" for k in KS)
    header += "".join(f"{c + ' r@10':>20}" for c in categories)
    print(f"{len(questions)} questions ({', '.join(f'{c} {counts[c]}' for c in categories)})")
    print(header)
    for name, row in table.items():
        line = f"{name:<18}" + "".join(f"{row[f'r@{k}']:>7.3f}" for k in KS)
        line += "".join(f"{row['categories'].get(c, 0.0):>20.3f}" for c in categories)
        print(line)
    best = table["+ understanding"]["r@10"]
    for baseline in ("today's search", "dense + decay", "dense only"):
        base = table[baseline]["r@10"]
        print(f"hybrid + understanding vs {baseline}, recall@10: {best:.3f} - {base:.3f}"
              f" = {best - base:+.3f} (target: +0.100)")  # fmt: skip


def read_dataset(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text())
    return data if isinstance(data, list) else [data]
