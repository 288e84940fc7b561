"""The supervisor's memory of past executions: how earlier jobs were planned and how they
went, per user, and what the decomposition advisor makes of them.

A *strategy* is a plan and every run of it: a plan the model made starts one (its id is
new), a plan adapted from, or shaped like, an earlier one runs that one again. Its score is
made of its runs (done, partial, aborted, escalated) and of the user's feedback on it (a
rejected step, "that was wrong").

Plaintext (the request, goals, failure messages) lives only in these models, in memory; the
PostgreSQL adapter encrypts it with the user's data key.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field, model_validator

from shared.models.base import MAX_PLANNED_SUBTASKS, SUBTASK_ID_PATTERN, Strict

ExecutionOutcome = Literal["done", "partial", "aborted", "escalated", "cancelled"]
FAILED_OUTCOMES: frozenset[str] = frozenset({"aborted", "escalated"})  # warned, never reused
FeedbackKind = Literal["rejected_step", "wrong"]
PlanSource = Literal["planned", "example", "reused"]
MAX_REQUEST_CHARS = 8000  # a turn's message at most


class PlannedStep(Strict):
    """One step of a plan as the execution memory keeps it."""

    id: str = Field(pattern=SUBTASK_ID_PATTERN)
    agent: str = Field(min_length=1, max_length=40)
    goal: str = Field(min_length=1, max_length=2000)
    depends_on: list[str] = Field(default_factory=list)
    role: str | None = None


class JobOrigin(Strict):
    """Where a job's plan came from, set by the turn that published it: the request it
    answers (in the language it was written in), the whole plan (steps the turn ran inline
    included) and the strategy the plan runs."""

    request: str = Field(min_length=1, max_length=MAX_REQUEST_CHARS)
    language: str = Field(default="en", pattern=r"^[a-z]{2}$")
    strategy_id: str = Field(min_length=1, max_length=64)
    plan: list[PlannedStep] = Field(default_factory=list, max_length=MAX_PLANNED_SUBTASKS)


class PlanAdvice(Strict):
    """What the advisor contributed to a turn's plan; kept on the turn's metadata and in the
    plan's state (an approval's answer carries it on)."""

    source: PlanSource
    strategy_id: str  # the strategy the plan runs: the suggested one, or a new one
    suggested: str | None = None  # the strategy suggested (example or reused)
    confidence: float | None = None  # the suggestion's
    warnings: int = 0  # failed strategies the planner was warned about


class SubtaskFailure(Strict):
    subtask_id: str
    agent: str
    goal: str = Field(max_length=2000)
    error: str = Field(max_length=500)  # "code: message"
    attempts: int = 0


class ExecutionDraft(Strict):
    """One finished job, ready to store (``ExecutionMemory.record``)."""

    user_id: str
    job_id: str
    strategy_id: str
    request: str = Field(min_length=1, max_length=MAX_REQUEST_CHARS)
    plan: list[PlannedStep] = Field(min_length=1)
    outcome: ExecutionOutcome
    failures: list[SubtaskFailure] = Field(default_factory=list)
    subtasks: int = Field(ge=1)  # recruited helpers included
    retries: int = Field(default=0, ge=0)
    duration_ms: int = Field(default=0, ge=0)
    tokens: int = Field(default=0, ge=0)
    embedding: list[float] = Field(min_length=1)
    embedding_model: str
    rejected: list[str] = Field(default_factory=list)  # interrupt ids of refused steps
    created_at: datetime
    expires_at: datetime


class Execution(Strict):
    """A stored execution, decrypted; ``similarity`` to the query that found it, if any."""

    id: str
    user_id: str
    job_id: str
    strategy_id: str
    request: str
    plan: list[PlannedStep]
    outcome: ExecutionOutcome
    failures: list[SubtaskFailure] = Field(default_factory=list)
    subtasks: int
    retries: int = 0
    duration_ms: int = 0
    tokens: int = 0
    embedding_model: str
    created_at: datetime
    expires_at: datetime
    penalties: int = 0  # the user's feedback against its strategy, all runs together
    similarity: float | None = None


class HistoryQuery(Strict):
    """The runs of the strategies nearest to a request's embedding (``limit`` nearest runs
    decide which strategies), among the user's runs under the same embedding model."""

    embedding: list[float] = Field(min_length=1)
    embedding_model: str
    limit: int = Field(default=8, ge=1, le=50)


class StrategyFeedback(Strict):
    """The user's word against a strategy, once per ``key`` (a turn or interrupt id): named
    directly, or as the strategy of the job the user judged."""

    user_id: str
    key: str = Field(min_length=1, max_length=200)
    kind: FeedbackKind
    strategy_id: str | None = None
    job_id: str | None = None
    created_at: datetime
    expires_at: datetime

    @model_validator(mode="after")
    def _one_target(self) -> StrategyFeedback:
        if (self.strategy_id is None) == (self.job_id is None):
            raise ValueError("name the strategy or the job, not both")
        return self


class StrategyRuns(Strict):
    """What a strategy's score is made of."""

    strategy_id: str
    runs: int  # cancelled ones not counted
    successes: float  # done 1, partial 0.5
    penalties: int  # rejected steps and "that was wrong"
    last_run: datetime


class Advice(Strict):
    """The advisor's suggestion for a request.

    ``reused``: ``plan`` is the suggestion's plan adapted to the request, to run without a
    planning call; ``example``: ``plan`` is the suggestion's plan, shown to the planner;
    ``planned``: nothing to suggest. ``warnings`` are similar runs that failed or were
    escalated: shown to the planner, never reused."""

    source: PlanSource = "planned"
    confidence: float | None = None
    suggestion: Execution | None = None
    plan: list[PlannedStep] = Field(default_factory=list)
    warnings: list[Execution] = Field(default_factory=list)
