"""The supervisor policy in numbers: when a job aborts, how a subtask backs off.

Failure threshold: a job aborts once its failed subtasks reach ``failure_limit``, the first
count beyond the job type's tolerated share of its subtasks (recruited ones included):
``share * n // 100 + 1``. ``default`` and ``research`` tolerate 50%, a strict majority
failing (six subtasks: the fourth failure aborts, three continue), ``data``
20% (six subtasks: the second failure aborts), ``critical`` 0% (the first failure aborts).
Below the threshold the job goes on and reports what failed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from shared.errors import DependencyUnavailable
from shared.models.jobs import JobType

TOLERATED_PERCENT: dict[JobType, int] = {"research": 50, "data": 20, "critical": 0, "default": 50}
# A job whose subtasks are all of one kind gets that kind's threshold: research tolerates
# gaps, figures less so, and acting for the user (booking, sending) none.
AGENT_JOB_TYPES: dict[str, JobType] = {
    "research": "research",
    "wealth": "data",
    "productivity": "critical",
}


def failure_limit(job_type: JobType, subtasks: int) -> int:
    """Failed subtasks at which a job of ``subtasks`` subtasks aborts."""
    return TOLERATED_PERCENT[job_type] * subtasks // 100 + 1


def job_type_for(agents: Sequence[str]) -> JobType:
    kinds = {AGENT_JOB_TYPES.get(agent, "default") for agent in agents}
    return kinds.pop() if len(kinds) == 1 else "default"


def backoff_seconds(retry: int, base: float, cap: float, rand: Callable[[], float]) -> float:
    """The wait before retry ``retry`` (1, 2, ...): exponential, capped, with equal jitter
    (half fixed, half random), so parallel subtasks hit by one outage spread out."""
    ceiling: float = min(cap, base * 2.0 ** (retry - 1))
    return ceiling / 2 + rand() * ceiling / 2


def is_transient(error: BaseException) -> bool:
    """Worth another try: a dependency (the model, a store, a tool's service) was down."""
    return isinstance(error, DependencyUnavailable)
