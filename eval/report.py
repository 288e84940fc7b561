"""The evaluation's figures: per question, then the summary (overall and per category)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from eval.layouts import Question, session_of

KS = (1, 5, 10)


@dataclass(frozen=True)
class QuestionResult:
    question: Question
    reply: str
    sources: list[str]  # per retrieved item, best first: the message or session it came from
    correct: bool | None  # None: the judge broke its schema twice (unjudged)
    reason: str
    tokens: int  # the question turn's model tokens (in + out)
    judge_tokens: int
    ms: float  # the question turn's wall-clock time
    route: str = ""  # the understanding tier's label for the question, if it read one

    def rank(self, sessions: bool) -> int | None:
        """Where the first item from an evidence message (or, with ``sessions``, from the
        summary of an evidence session) was, 1-based; None if nowhere."""
        evidence = self.question.evidence
        wanted = {session_of(e) for e in evidence}
        for rank, source in enumerate(self.sources, start=1):
            if source in evidence or (sessions and source in wanted):
                return rank
        return None

    def as_row(self) -> dict[str, Any]:
        return {
            "id": self.question.id,
            "category": self.question.category,
            "question": self.question.text,
            "gold": self.question.answer,
            "reply": self.reply,
            "correct": self.correct,
            "reason": self.reason,
            "evidence_rank": self.rank(sessions=False),
            "evidence_rank_with_sessions": self.rank(sessions=True),
            "retrieved": len(self.sources),
            "tokens": self.tokens,
            "judge_tokens": self.judge_tokens,
            "ms": round(self.ms, 1),
            "route": self.route,
        }


def _figures(results: list[QuestionResult], k: int) -> dict[str, Any]:
    if not results:
        return {"questions": 0}
    cuts = [k_ for k_ in KS if k_ <= k] or [k]
    latencies = sorted(r.ms for r in results)
    judged = [r.correct for r in results if r.correct is not None]
    return {
        "questions": len(results),
        "accuracy": round(statistics.fmean(judged), 3) if judged else None,
        "unjudged": len(results) - len(judged),
        **{f"recall@{c}": round(_share(results, c, sessions=False), 3) for c in cuts},
        **{f"recall@{c}_with_sessions": round(_share(results, c, sessions=True), 3) for c in cuts},
        "tokens_per_question": round(statistics.fmean(r.tokens for r in results), 1),
        "judge_tokens_per_question": round(statistics.fmean(r.judge_tokens for r in results), 1),
        "latency_ms_p50": round(statistics.median(latencies), 1),
        "latency_ms_p95": round(latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))], 1),
    }


def _share(results: list[QuestionResult], k: int, sessions: bool) -> float:
    return statistics.fmean(
        1.0 if (rank := r.rank(sessions)) is not None and rank <= k else 0.0 for r in results
    )


def summary(results: list[QuestionResult], k: int = 10) -> dict[str, Any]:
    by_category: dict[str, list[QuestionResult]] = defaultdict(list)
    for result in results:
        by_category[result.question.category].append(result)
    return {
        "summary": _figures(results, k),
        "categories": {name: _figures(rows, k) for name, rows in sorted(by_category.items())},
        "questions": [r.as_row() for r in results],
    }
