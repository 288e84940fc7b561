"""One execution per finished job, for the advisor to learn from.

Written when the job ends (done, aborted, cancelled), before its result is posted and the
job document's final save: a crash in between finishes the job again on the redelivery, and
the store keeps one row
per (user, job), so the execution is recorded once. The request is the job's origin (the
turn's message) when the turn set one, else the job's goal; the plan is the turn's whole
plan (steps run inline included), else the job's subtasks.

Outcome: ``escalated`` when the watchdog had to escalate to the user (whatever the end),
else ``aborted``, ``cancelled``, ``partial`` (done, with failed subtasks) or ``done``.
Refused steps (approvals the user rejected) count against the strategy.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

from shared.models.history import (
    MAX_REQUEST_CHARS,
    ExecutionDraft,
    ExecutionOutcome,
    PlannedStep,
    SubtaskFailure,
)
from shared.models.jobs import JobState
from shared.services.agent_jobs.watchdog import ESCALATE_AT
from shared.services.history.needs import HistoryPorts
from shared.services.history.shape import shape

RECORDED_STATUSES = frozenset({"done", "aborted", "cancelled"})


def record_execution(ports: HistoryPorts, state: JobState) -> bool:
    """Store the finished job's execution; False if it was stored before (or the account
    was erased since the job was made)."""
    job = state.job
    origin = job.origin
    request = origin.request if origin else (job.goal or job.subtasks[0].goal)
    language = origin.language if origin else "en"
    [vector] = ports.embedder.embed([shape(request, language)])
    now = ports.clock.now()
    draft = ExecutionDraft(
        user_id=job.user_id,
        job_id=job.job_id,
        strategy_id=origin.strategy_id if origin else strategy_for_job(job.job_id),
        request=request[:MAX_REQUEST_CHARS],
        plan=origin.plan if origin and origin.plan else _subtask_plan(state),
        outcome=outcome_of(state),
        failures=[
            SubtaskFailure(
                subtask_id=s.subtask.id,
                agent=s.subtask.agent,
                goal=s.subtask.goal,
                error=s.error[:500],
                attempts=s.attempts,
            )
            for s in state.subtasks
            if s.status == "failed"
        ],
        subtasks=len(state.subtasks),
        retries=sum(max(s.attempts - 1, 0) for s in state.subtasks),
        duration_ms=max(int((now - state.created_at).total_seconds() * 1000), 0),
        tokens=state.tokens_used,
        embedding=vector,
        embedding_model=ports.embedder.model_name,
        rejected=list(state.rejected),
        created_at=now,
        expires_at=now + timedelta(days=ports.settings.execution_memory_ttl_days),
    )
    return ports.executions.record(draft, issued_at=job.created_at)


def outcome_of(state: JobState) -> ExecutionOutcome:
    if any(w.level >= ESCALATE_AT for w in state.whispers):
        return "escalated"
    if state.status == "aborted":
        return "aborted"
    if state.status == "cancelled":
        return "cancelled"
    return "partial" if any(s.status == "failed" for s in state.subtasks) else "done"


def strategy_for_job(job_id: str) -> str:
    """A job published without an origin (not by a turn) starts its own strategy."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"job-strategy:{job_id}"))


def _subtask_plan(state: JobState) -> list[PlannedStep]:
    """The job's own subtasks; helpers recruited on the way are the run's, not the plan's."""
    planned = [s.subtask for s in state.subtasks if s.recruited_by is None]
    ids = {s.id for s in planned}
    return [
        PlannedStep(
            id=s.id,
            agent=s.agent,
            goal=s.goal[:2000],
            depends_on=[d for d in s.depends_on if d in ids],
            role=s.role,
        )
        for s in planned
    ]
