"""Pure changes of a ``JobState``: the DAG's ready set, the mailbox, recruitment, results.

Every function returns a new state (the models are immutable); the supervisor applies them
under its lock and checkpoints the result.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from shared.conversation.answers import REJECT
from shared.models.jobs import (
    SETTLED,
    AgentJob,
    JobInterrupt,
    JobState,
    MailboxMessage,
    Subtask,
    SubtaskState,
)
from shared.services.agent_jobs.policy import failure_limit

RESULT_CHARS = 8000  # of a subtask's result, as stored and posted


def new_state(job: AgentJob, owner: str, now: datetime, lease_seconds: int) -> JobState:
    return JobState(
        job=job.model_copy(update={"resume": None}),
        subtasks=[SubtaskState(subtask=s) for s in job.subtasks],
        deliveries=1,
        lease_owner=owner,
        lease_until=now + timedelta(seconds=lease_seconds),
        created_at=now,
        updated_at=now,
    )


def with_subtask(state: JobState, subtask_id: str, **changes: Any) -> JobState:
    subtasks = [
        s.model_copy(update=changes) if s.subtask.id == subtask_id else s for s in state.subtasks
    ]
    return state.model_copy(update={"subtasks": subtasks})


def ready(state: JobState) -> list[str]:
    """Pending subtasks whose prerequisites all settled (done, failed or skipped): a failed
    prerequisite does not hold its dependents back, they are told it failed."""
    settled = {s.subtask.id for s in state.subtasks if s.status in SETTLED}
    return [
        s.subtask.id
        for s in state.subtasks
        if s.status == "pending" and set(s.subtask.depends_on) <= settled
    ]


def earlier_results(state: JobState, subtask: Subtask) -> dict[str, str]:
    """What a subtask's prerequisites produced, failures said as such."""
    results = {}
    for dependency in subtask.depends_on:
        done = state.subtask(dependency)
        results[dependency] = (
            done.result if done.status == "done" else f"(not available: {done.error or 'skipped'})"
        )
    return results


def failed(state: JobState) -> list[SubtaskState]:
    return [s for s in state.subtasks if s.status == "failed"]


def post(
    state: JobState, sender: str, to: str, text: str, now: datetime, capacity: int
) -> JobState:
    """Add a message; a full mailbox first drops its oldest half."""
    mailbox = list(state.mailbox)
    if len(mailbox) >= capacity:
        mailbox = mailbox[len(mailbox) // 2 :]
    seq = state.mail_seq + 1
    message = MailboxMessage(seq=seq, sender=sender, to=to, text=text, at=now)
    return state.model_copy(update={"mailbox": [*mailbox, message], "mail_seq": seq})


def recruit(state: JobState, sender: str, agent: str, goal: str) -> tuple[JobState, str]:
    """Add a helper subtask for ``sender``; the subtasks waiting on the sender (not yet
    started) wait for the helper too and get its result. Returns the new id."""
    count = sum(1 for s in state.subtasks if s.recruited_by == sender)
    helper_id = f"{sender}-r{count + 1}"[:32]
    helper = SubtaskState(
        subtask=Subtask(id=helper_id, agent=agent, goal=goal[:2000]), recruited_by=sender
    )
    subtasks = [_also_after(s, sender, helper_id) for s in state.subtasks]
    return state.model_copy(update={"subtasks": [*subtasks, helper]}), helper_id


def _also_after(waiting: SubtaskState, sender: str, helper_id: str) -> SubtaskState:
    if waiting.status != "pending" or sender not in waiting.subtask.depends_on:
        return waiting
    needs = [*waiting.subtask.depends_on, helper_id]
    return waiting.model_copy(
        update={"subtask": waiting.subtask.model_copy(update={"depends_on": needs})}
    )


def final_results(state: JobState) -> list[SubtaskState]:
    """The results the job ends with: done subtasks that no other subtask built on."""
    used = {d for s in state.subtasks for d in s.subtask.depends_on}
    return [s for s in state.subtasks if s.status == "done" and s.subtask.id not in used]


def take_answer(state: JobState) -> tuple[JobState, JobInterrupt | None, str | None]:
    """The answer a claim recorded, applied: the subtask that asked is pending again and
    gets the answer (approvals, questions); an escalation resumes it with the watchdog
    reset, or stops the job (``user_abort``)."""
    answered = state.interrupt
    if answered is None or answered.option_id is None:
        return state, None, None
    sid = answered.subtask_id
    if _refused_by_user(answered) and answered.id not in state.rejected:
        state = state.model_copy(update={"rejected": [*state.rejected, answered.id]})
    if answered.purpose != "escalation":  # kept until the subtask has used it
        return with_subtask(state, sid, status="pending"), answered, None
    state = state.model_copy(update={"interrupt": None})
    if answered.option_id == "abort":
        return state, None, "user_abort"
    return with_subtask(state, sid, status="pending", watchdog_level=0), None, None


def _refused_by_user(answered: JobInterrupt) -> bool:
    """The user (not the timeout) rejected an approval: it counts against the plan."""
    user = answered.source == "user"
    return user and answered.purpose == "approval" and answered.option_id == REJECT


def unread(state: JobState, reader: str, seen: int) -> list[MailboxMessage]:
    """Messages for ``reader`` (or everyone) from others, after sequence number ``seen``."""
    return [
        m for m in state.mailbox if m.seq > seen and m.sender != reader and m.to in (reader, "*")
    ]


def take_notes(state: JobState, subtask_id: str) -> tuple[JobState, list[str]]:
    """The subtask's undelivered whispers, marked delivered."""
    due = [w for w in state.whispers if w.subtask_id == subtask_id and not w.delivered]
    whispers = [w.model_copy(update={"delivered": True}) if w in due else w for w in state.whispers]
    return state.model_copy(update={"whispers": whispers}), [w.text for w in due]


def ending(state: JobState, stop: str | None) -> JobState:
    """The status a run ends in, from why it stopped (None: it ran out of work).

    An abort whose failures are not all permanent stalls instead: the transient ones go
    back to pending and the job to Pub/Sub, since they may well pass on a redelivery."""
    if stop in ("abort", "budget", "required"):
        permanent = [s for s in failed(state) if not s.transient]
        if stop == "abort" and len(permanent) < failure_limit(
            state.job.job_type, len(state.subtasks)
        ):
            for s in failed(state):
                if s.transient:
                    state = with_subtask(
                        state, s.subtask.id, status="pending", error="", transient=False
                    )
            return state.model_copy(update={"status": "stalled", "outcome": "outage"})
        return state.model_copy(update={"status": "aborted", "outcome": stop})
    waiting = any(s.status == "waiting" for s in state.subtasks)
    status = {"pause": "paused", "cancel": "cancelled", "user_abort": "cancelled"}.get(
        stop or "", "waiting" if waiting else "done"
    )
    return state.model_copy(update={"status": status, "outcome": stop or ""})
