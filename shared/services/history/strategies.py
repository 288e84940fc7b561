"""What the user sees of the execution memory: their strategies, one view each, built from
the runs the store returns (``ExecutionMemory.list_executions``)."""

from __future__ import annotations

from collections import defaultdict

from shared.models.history import FAILED_OUTCOMES, Execution
from shared.models.history_api import StrategyView
from shared.services.history.scoring import strategy_runs, success_rate

MAX_REQUESTS = 5


def strategy_views(executions: list[Execution]) -> list[StrategyView]:
    """One view per strategy, the most recently run first."""
    by_strategy: dict[str, list[Execution]] = defaultdict(list)
    for run in sorted(executions, key=lambda r: r.created_at, reverse=True):
        by_strategy[run.strategy_id].append(run)
    stats = strategy_runs(executions)
    views = []
    for strategy_id, runs in by_strategy.items():
        latest = runs[0]
        worked = next((r for r in runs if r.outcome in ("done", "partial")), latest)
        failed = next((r for r in runs if r.outcome in FAILED_OUTCOMES), None)
        requests = list(dict.fromkeys(r.request for r in runs))[:MAX_REQUESTS]
        views.append(
            StrategyView(
                strategy_id=strategy_id,
                plan=worked.plan,
                requests=requests,
                runs=stats[strategy_id].runs,
                done=sum(1 for r in runs if r.outcome == "done"),
                partial=sum(1 for r in runs if r.outcome == "partial"),
                failed=sum(1 for r in runs if r.outcome in FAILED_OUTCOMES),
                feedback=latest.penalties,
                success_rate=round(success_rate(stats[strategy_id]), 4),
                last_outcome=latest.outcome,
                last_run_at=latest.created_at,
                failures=failed.failures if failed else [],
            )
        )
    return views
