"""Wire models of what the assistant has learned about how to do things for the user
(``/settings/strategies/*`` of the ``memory`` function, and the export), mirrored in
docs/openapi.yaml. Views of ``shared.models.history``: never the embeddings."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from shared.models.base import Confirmation, Strict
from shared.models.history import Execution, ExecutionOutcome, PlannedStep, SubtaskFailure

STRATEGY_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$"


class StrategyRef(Strict):
    strategy_id: str = Field(pattern=STRATEGY_ID_PATTERN)


class ForgetAllRequest(Confirmation):
    pass


class StrategyView(Strict):
    """A way of doing a kind of task that the planner may reuse, suggest or warn about."""

    strategy_id: str
    plan: list[PlannedStep]  # of its latest run that worked, else of its latest run
    requests: list[str]  # what it was run for, newest first (at most 5)
    runs: int  # cancelled runs not counted
    done: int
    partial: int
    failed: int  # aborted, or escalated by the watchdog
    feedback: int  # refused steps and "that was wrong"
    success_rate: float  # what the advisor's confidence takes
    last_outcome: ExecutionOutcome
    last_run_at: datetime
    failures: list[SubtaskFailure]  # of its latest failed run: what the planner is warned of


class ForgottenResponse(Strict):
    forgotten: int  # runs deleted


class ExecutionView(Strict):
    """One finished job as the execution memory keeps it (the export)."""

    id: str
    job_id: str
    strategy_id: str
    request: str
    plan: list[PlannedStep]
    outcome: ExecutionOutcome
    failures: list[SubtaskFailure]
    subtasks: int
    retries: int
    duration_ms: int
    tokens: int
    feedback: int  # against its strategy
    created_at: datetime
    expires_at: datetime

    @classmethod
    def of(cls, execution: Execution) -> ExecutionView:
        return cls.model_validate(
            {
                **execution.model_dump(
                    exclude={"user_id", "embedding_model", "similarity", "penalties"}
                ),
                "feedback": execution.penalties,
            }
        )
