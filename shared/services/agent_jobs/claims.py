"""The job document under a lease: claim a delivery once, checkpoint, release.

A delivery claims the job in one Firestore transaction. A new job is created and leased; a
finished one is a duplicate; one leased by a live run is busy (the delivery is answered
non-2xx, so Pub/Sub tries again later); one whose lease ran out (a crashed run) is taken
over. A continuation (``job.resume``) claims exactly its interrupt, once: the answer is
recorded and the interrupt id joins ``answered``, so a repeated answer finds nothing. A job
waiting on a question it showed, or paused by the user, is left alone by plain deliveries.

Every later write checks that this run still holds the lease (``LeaseLost`` otherwise) and
keeps the ``control`` field the user may have set meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from shared.models.jobs import FINISHED, AgentJob, JobState
from shared.services.agent_jobs.jobstate import new_state
from shared.services.agent_jobs.needs import JobDocumentPorts

ClaimOutcome = Literal["claimed", "duplicate", "busy", "waiting", "paused", "unknown"]
Change = Callable[[JobState | None], tuple["Claim", JobState | None]]


class LeaseLost(Exception):
    """Another delivery took the job over (this run's lease ran out): stop, write nothing."""


@dataclass(frozen=True)
class Claim:
    outcome: ClaimOutcome
    state: JobState | None = None


def claim(deps: JobDocumentPorts, job: AgentJob, owner: str) -> Claim:
    now = deps.clock.now()
    change = claim_change(job, owner, now, deps.settings.agent_job_lease_seconds)
    return deps.jobs.update(job.user_id, job.job_id, change)


def claim_change(job: AgentJob, owner: str, now: datetime, lease_seconds: int) -> Change:
    def take(state: JobState, deliveries: int) -> JobState:
        subtasks = [
            s.model_copy(update={"status": "pending"}) if s.status == "running" else s
            for s in state.subtasks
        ]  # a crashed run's subtasks start again
        return state.model_copy(
            update={
                "status": "running",
                "subtasks": subtasks,
                "deliveries": deliveries,
                "lease_owner": owner,
                "lease_until": now + timedelta(seconds=lease_seconds),
                "updated_at": now,
            }
        )

    def change(stored: JobState | None) -> tuple[Claim, JobState | None]:
        if stored is None:
            if job.resume is not None:
                return Claim("unknown"), None
            created = new_state(job, owner, now, lease_seconds)
            return Claim("claimed", created), created
        if stored.status in FINISHED:
            return Claim("duplicate", stored), None
        if stored.leased_by_other(owner, now):
            return Claim("busy", stored), None
        if job.resume is not None:
            return _answer(stored, job, take)
        return _plain(stored, take)

    return change


def _plain(
    stored: JobState, take: Callable[[JobState, int], JobState]
) -> tuple[Claim, JobState | None]:
    """A first delivery again, or a redelivery: continue unless the job waits or is paused."""
    if stored.status == "paused":
        return Claim("paused", stored), None
    asked = stored.interrupt
    if stored.status == "waiting" and asked and asked.opened and asked.option_id is None:
        return Claim("waiting", stored), None
    taken = take(stored, stored.deliveries + 1)
    return Claim("claimed", taken), taken


def _answer(
    stored: JobState, job: AgentJob, take: Callable[[JobState, int], JobState]
) -> tuple[Claim, JobState | None]:
    resume, asked = job.resume, stored.interrupt
    assert resume is not None
    if asked is None or asked.id != resume.interrupt_id or asked.id in stored.answered:
        return Claim("duplicate", stored), None
    answered = asked.model_copy(
        update={"option_id": resume.option_id, "answer": resume.answer, "source": resume.source}
    )
    recorded = stored.model_copy(
        update={"interrupt": answered, "answered": [*stored.answered, asked.id]}
    )
    if stored.status == "paused":  # kept for when the user resumes the job
        return Claim("paused", recorded), recorded
    taken = take(recorded, stored.deliveries)
    return Claim("claimed", taken), taken


def save(
    deps: JobDocumentPorts, state: JobState, owner: str, release: bool = False
) -> tuple[JobState, str]:
    """Write ``state`` if ``owner`` still holds the lease (extended, or given up with
    ``release``); returns the state as written and the user's control request."""
    now = deps.clock.now()
    lease = None if release else now + timedelta(seconds=deps.settings.agent_job_lease_seconds)
    written = state.model_copy(
        update={"updated_at": now, "lease_until": lease, "lease_owner": None if release else owner}
    )

    def change(stored: JobState | None) -> tuple[str, JobState | None]:
        if stored is None or stored.lease_owner != owner:
            raise LeaseLost()
        return stored.control, written.model_copy(update={"control": stored.control})

    control = deps.jobs.update(state.job.user_id, state.job.job_id, change)
    return written.model_copy(update={"control": control}), control


def release(deps: JobDocumentPorts, job: AgentJob, owner: str) -> None:
    """Give up the lease after a failed run, so a redelivery takes over at once."""

    def change(stored: JobState | None) -> tuple[None, JobState | None]:
        if stored is None or stored.lease_owner != owner:
            return None, None
        subtasks = [
            s.model_copy(update={"status": "pending"}) if s.status == "running" else s
            for s in stored.subtasks
        ]
        freed = {"lease_owner": None, "lease_until": None, "subtasks": subtasks}
        return None, stored.model_copy(update=freed)

    deps.jobs.update(job.user_id, job.job_id, change)
