"""How much of exact BM25 the keyword channel finds: its top 10 (``FactStore.recall``, which
fetches only the facts holding the query's rarer terms, ``fact_rules.fetching_terms``) next
to the best 10 of BM25 computed here over every fact (a fact tied with the 10th counts as
found), on the bench's plaintext terms (the blind index hashes each term of one user to one
value, so the ranking is the same)."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict

import numpy as np

from bench.retrieval_data import DIMS, MODEL, NOW
from shared.adapters.fact_rules import bm25_idf, bm25_term
from shared.conversation.terms import terms
from shared.models.memory import RecallQuery
from shared.ports import FactStore


class ExactBm25:
    def __init__(self, texts: list[str]) -> None:
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        lengths = []
        for index, text in enumerate(texts):
            found = terms(text)
            lengths.append(len(found))
            for term, count in Counter(found).items():
                self.postings[term].append((index, count))
        self.lengths = np.array(lengths, dtype=np.float64)
        self.total = len(texts)

    def best(self, question: str, k: int = 10) -> tuple[set[int], int]:
        """The facts scoring at least the k-th best score (ties all count: many synthetic
        facts score alike), and how many a perfect top k holds."""
        scores = np.zeros(self.total)
        average = float(self.lengths.mean())
        for term in set(terms(question)):
            posting = self.postings.get(term, [])
            idf = bm25_idf(len(posting), self.total)
            for index, count in posting:
                scores[index] += bm25_term(idf, count, int(self.lengths[index]), average)
        ranked = np.sort(scores[scores > 0])[::-1]
        if len(ranked) == 0:
            return set(), 0
        floor = ranked[min(k, len(ranked)) - 1] - 1e-9
        return {int(i) for i in np.flatnonzero(scores >= floor)}, min(k, len(ranked))


def keyword_recall(
    store: FactStore, user: str, ids: list[str], texts: list[str], questions: list[str]
) -> tuple[float, int]:
    """Mean recall@10 of the keyword channel against exact BM25, and how many questions."""
    exact, position = ExactBm25(texts), {fact_id: i for i, fact_id in enumerate(ids)}
    recalls = []
    for question in questions:
        truth, wanted = exact.best(question)
        if not wanted:
            continue
        query = RecallQuery(embedding=[1.0] + [0.0] * (DIMS - 1), embedding_model=MODEL,
                            terms=terms(question), pool=10)  # fmt: skip
        found = [c for c in store.recall(user, query, NOW) if c.keyword_score is not None]
        found.sort(key=lambda c: (-(c.keyword_score or 0.0), c.fact_id))
        top = {position[c.fact_id] for c in found[:10]}
        recalls.append(len(top & truth) / wanted)
    return statistics.fmean(recalls), len(recalls)
