"""The user's control over a running job: pause, resume, cancel, take over.

Each acts on the job document in one transaction. A job that a run holds gets a ``control``
request, which the run sees between steps (``Supervisor.stop_reason``: no new step starts
after it); a job no run holds (waiting, paused, stalled, or its run crashed) changes at
once. ``resume`` republishes a paused job, whose run continues the suspended subtasks from
their transcripts. ``takeover`` cancels and hands back the job's context: the finished
subtasks with their results, the others with where they stopped.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from shared.deps import Deps
from shared.errors import JobNotActive, NotFound
from shared.models.base import Strict
from shared.models.domain import HitlControl
from shared.models.jobs import FINISHED, JobState, PendingAction, SubtaskStatus
from shared.services import handoff
from shared.services.agent_jobs import reports

Command = Literal["pause", "resume", "cancel"]


class SubtaskContext(Strict):
    id: str
    agent: str
    goal: str
    status: SubtaskStatus
    result: str = ""
    error: str = ""
    last_steps: list[str] = Field(default_factory=list)
    pending: str = ""  # the call or question that waited for the user when it stopped


class JobContext(Strict):
    """What a user taking over a job gets: where every part of it stands."""

    job_id: str
    goal: str
    status: str
    subtasks: list[SubtaskContext]
    mailbox: list[str]


def pause(deps: Deps, user_id: str, job_id: str) -> JobState:
    return _apply(deps, user_id, job_id, "pause")


def resume(deps: Deps, user_id: str, job_id: str) -> JobState:
    state = _apply(deps, user_id, job_id, "resume")
    if state.lease_owner is None:  # no run holds it: start one
        message = state.job.model_copy(update={"created_at": deps.clock.now()})
        handoff.publish_jobs(deps.settings, deps.publisher, [message], None)
    return state


def cancel(deps: Deps, user_id: str, job_id: str) -> JobState:
    state = _apply(deps, user_id, job_id, "cancel")
    if state.status == "cancelled":  # no run held it: tell the chat here
        reports.final(deps, state)
        _release_question(deps, state)
    return state


def _release_question(deps: Deps, state: JobState) -> None:
    """A cancelled job asks nothing any more: its question leaves the chat."""
    job = state.job
    chat = deps.conversations.get_chat(job.user_id, job.chat_id)
    control = chat.control if chat is not None else None
    if control is not None and control.target == "job" and control.thread_id == job.job_id:
        deps.conversations.put_control(job.user_id, job.chat_id, HitlControl())


def takeover(deps: Deps, user_id: str, job_id: str) -> JobContext:
    state = cancel(deps, user_id, job_id)
    return JobContext(
        job_id=job_id,
        goal=state.job.goal,
        status=state.status,
        subtasks=[
            SubtaskContext(
                id=s.subtask.id,
                agent=s.subtask.agent,
                goal=s.subtask.goal,
                status=s.status,
                result=s.result,
                error=s.error,
                last_steps=[
                    f"{r.action} {r.tool} {r.text}: {r.result}"[:500] for r in s.steps[-5:]
                ],
                pending=_pending(s.pending),
            )
            for s in state.subtasks
        ],
        mailbox=[f"{m.sender} -> {m.to}: {m.text}" for m in state.mailbox],
    )


def _pending(action: PendingAction | None) -> str:
    if action is None:
        return ""
    return (action.question or f"{action.tool} {action.args}")[:500]


def _apply(deps: Deps, user_id: str, job_id: str, command: Command) -> JobState:
    now = deps.clock.now()

    def change(stored: JobState | None) -> tuple[JobState | None, JobState | None]:
        if stored is None:
            return None, None
        if stored.status in FINISHED:
            return stored, None
        changed = _changed(stored, command, now)
        return changed, changed

    state = deps.jobs.update(user_id, job_id, change)
    if state is None:
        raise NotFound("no such job")
    if state.status in FINISHED and not (command == "cancel" and state.status == "cancelled"):
        raise JobNotActive(f"the job is {state.status}")
    return state


def _changed(stored: JobState, command: Command, now: datetime) -> JobState:
    held = stored.lease_owner is not None and (
        stored.lease_until is not None and stored.lease_until > now
    )
    if command == "resume":
        if stored.status != "paused" and stored.control != "pause":
            raise JobNotActive(f"the job is {stored.status}, not paused")
        status = stored.status if held else "running"
        return stored.model_copy(update={"control": "none", "status": status, "updated_at": now})
    if held:  # the run stops before its next step
        return stored.model_copy(update={"control": command, "updated_at": now})
    if command == "pause":
        return stored.model_copy(update={"status": "paused", "updated_at": now})
    return stored.model_copy(
        update={"status": "cancelled", "control": "none", "outcome": "cancel", "updated_at": now}
    )
