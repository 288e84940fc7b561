"""A strategy's confidence for a new request, and which past runs count as what.

    confidence = 0.6 * similarity + 0.3 * success rate + 0.1 * recency

- **similarity**: cosine of the two requests' shapes (``shape``); a run below
  ``advisor_min_similarity`` is not considered at all, not even as a warning.
- **success rate**: ``(successes + 1) / (runs + penalties + 1)``, a done run counting 1 and
  a partial one 0.5, every rejected step or "that was wrong" as one more run that failed.
  One success is fully trusted (1.0); a rejection after it halves that to 0.67, and
  repeated success raises it again (five: 0.86).
- **recency**: halves every ``advisor_half_life_days`` since the strategy last ran.

Similarity weighs most: what worked for another kind of task says little. With the
defaults, a fresh single success is reused from a similarity of 0.67 on; after a rejection
it needs 0.83, and it is never reused once its success rate drops to a third.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from shared.models.history import FAILED_OUTCOMES, Execution, StrategyRuns

SIMILARITY_WEIGHT, SUCCESS_WEIGHT, RECENCY_WEIGHT = 0.6, 0.3, 0.1
OUTCOME_VALUE = {"done": 1.0, "partial": 0.5, "aborted": 0.0, "escalated": 0.0}
MAX_WARNINGS = 3


@dataclass(frozen=True)
class Judgement:
    best: Execution | None  # the most confident successful run
    confidence: float | None
    warnings: list[Execution]  # similar runs that failed or were escalated, nearest first


def strategy_runs(executions: Iterable[Execution]) -> dict[str, StrategyRuns]:
    """Each strategy's runs (cancelled ones do not count), successes and penalties."""
    totals: dict[str, StrategyRuns] = {}
    for run in executions:
        seen = totals.get(run.strategy_id)
        counted = run.outcome in OUTCOME_VALUE
        totals[run.strategy_id] = StrategyRuns(
            strategy_id=run.strategy_id,
            runs=(seen.runs if seen else 0) + int(counted),
            successes=(seen.successes if seen else 0.0) + OUTCOME_VALUE.get(run.outcome, 0.0),
            penalties=run.penalties,
            last_run=max(run.created_at, seen.last_run) if seen else run.created_at,
        )
    return totals


def success_rate(runs: StrategyRuns) -> float:
    return (runs.successes + 1) / (runs.runs + runs.penalties + 1)


def recency(last_run: datetime, now: datetime, half_life_days: float) -> float:
    age_days = max((now - last_run).total_seconds(), 0.0) / 86400
    return float(0.5 ** (age_days / half_life_days))


def confidence(
    similarity: float, runs: StrategyRuns, now: datetime, half_life_days: float
) -> float:
    return round(
        SIMILARITY_WEIGHT * max(similarity, 0.0)
        + SUCCESS_WEIGHT * success_rate(runs)
        + RECENCY_WEIGHT * recency(runs.last_run, now, half_life_days),
        4,
    )


def judge(
    related: list[Execution], now: datetime, min_similarity: float, half_life_days: float
) -> Judgement:
    """The successful run to suggest (the most confident) and the failed ones to warn of,
    among the runs at least ``min_similarity`` like the request."""
    stats = strategy_runs(related)
    similar = [r for r in related if (r.similarity or 0.0) >= min_similarity]
    warnings = sorted(
        (r for r in similar if r.outcome in FAILED_OUTCOMES),
        key=lambda r: -(r.similarity or 0.0),
    )[:MAX_WARNINGS]
    scored = [
        (confidence(r.similarity or 0.0, stats[r.strategy_id], now, half_life_days), r)
        for r in similar
        if r.outcome in ("done", "partial")
    ]
    if not scored:
        return Judgement(None, None, warnings)
    best_confidence, best = max(scored, key=lambda pair: (pair[0], pair[1].created_at))
    return Judgement(best, best_confidence, warnings)
