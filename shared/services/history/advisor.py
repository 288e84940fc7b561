"""The decomposition advisor: what the user's past executions suggest for a new request.

``advise`` embeds the request's shape, reads the runs of the strategies nearest to it, and
judges them (``scoring``): above ``advisor_reuse_confidence`` (0.8) the best run's plan is
adapted to the request and reused without a planning call, unless a similar run failed
(its warning needs the planner), the best run only worked in part, or the adaptation is
unsafe (``shape.adapt``); from
``advisor_example_confidence`` (0.5) it is an example for the planner; failed or escalated
runs are only ever warnings. An outage of the store or the embedder costs the suggestion,
never the turn: the planner then plans as it would without history.

``feedback`` marks a strategy down once per key (``ExecutionMemory.add_feedback``).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from shared.agents.registry import AGENTS
from shared.errors import DependencyUnavailable
from shared.models.history import (
    Advice,
    Execution,
    FeedbackKind,
    HistoryQuery,
    PlannedStep,
    StrategyFeedback,
)
from shared.services.history import scoring
from shared.services.history.needs import HistoryPorts
from shared.services.history.shape import adapt, shape

log = logging.getLogger("history")
NEAREST_RUNS = 8  # runs whose strategies are read for a suggestion


class HistoryAdvisor:
    def __init__(self, ports: HistoryPorts) -> None:
        self._ports = ports

    def advise(self, user_id: str, request: str, language: str) -> Advice:
        settings = self._ports.settings
        if not settings.advisor_enabled:
            return Advice()
        try:
            related = self._related(user_id, request, language)
        except DependencyUnavailable as outage:  # history is an aid, not a dependency
            log.warning("no advice: %s", outage.message, extra={"user_id": user_id})
            return Advice()
        now = self._ports.clock.now()
        judged = scoring.judge(
            related, now, settings.advisor_min_similarity, settings.advisor_half_life_days
        )
        best, score = judged.best, judged.confidence
        if best is None or score is None or score < settings.advisor_example_confidence:
            return Advice(warnings=judged.warnings)
        if not _plannable(best.plan):
            return Advice(warnings=judged.warnings)
        if score > settings.advisor_reuse_confidence and _reusable(best, judged.warnings):
            adapted = adapt(best.request, request, best.plan, language)
            if adapted is not None:
                return Advice(source="reused", confidence=score, suggestion=best, plan=adapted)
        return Advice(
            source="example",
            confidence=score,
            suggestion=best,
            plan=best.plan,
            warnings=judged.warnings,
        )

    def feedback(
        self,
        user_id: str,
        key: str,
        kind: FeedbackKind,
        *,
        strategy_id: str | None = None,
        job_id: str | None = None,
    ) -> bool:
        now = self._ports.clock.now()
        word = StrategyFeedback(
            user_id=user_id,
            key=key,
            kind=kind,
            strategy_id=strategy_id,
            job_id=job_id,
            created_at=now,
            expires_at=now + timedelta(days=self._ports.settings.execution_memory_ttl_days),
        )
        try:
            counted = self._ports.executions.add_feedback(word)
        except DependencyUnavailable as outage:
            log.warning("feedback not counted: %s", outage.message, extra={"user_id": user_id})
            return False
        log.info("strategy feedback", extra={"user_id": user_id, "kind": kind, "new": counted})
        return counted

    def _related(self, user_id: str, request: str, language: str) -> list[Execution]:
        embedder = self._ports.embedder
        [vector] = embedder.embed([shape(request, language)], task="RETRIEVAL_QUERY")
        query = HistoryQuery(
            embedding=vector, embedding_model=embedder.model_name, limit=NEAREST_RUNS
        )
        return self._ports.executions.related(user_id, query, self._ports.clock.now())


def _reusable(best: Execution, warnings: list[Execution]) -> bool:
    """Only a run that fully worked is reused as is, and only while no similar run failed
    (its warning needs the planner): a partial run is an example of what to do better."""
    return best.outcome == "done" and not warnings


def _plannable(plan: list[PlannedStep]) -> bool:
    """A past plan whose agents the registry no longer offers is not suggested."""
    return bool(plan) and all(
        step.agent in AGENTS and AGENTS[step.agent].plannable for step in plan
    )
