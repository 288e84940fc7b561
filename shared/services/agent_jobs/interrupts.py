"""The questions a job asks the user, one at a time, through the chat's interrupt.

A sensitive tool call asks for approval (approve / reject), an agent's question asks for
clarification (a free-text answer), a watchdog escalation asks whether to resume or abort.
The job's state names the interrupt before it is shown (so a crash in between re-shows the
same id), then ``ConversationStore.open_interrupt`` makes it the chat's pending interrupt
(``target="job"``, ``thread_id`` = the job id) and posts the question in one transaction.
Approvals and questions time out (``approval_timeout_seconds``): a Cloud Task answers
"reject" then (``shared.services.hitl_timeouts``). The answer comes back through
``shared.app.agent_continuation.continue_job``.
"""

from __future__ import annotations

from datetime import timedelta

from shared.models.jobs import JobInterrupt, JobState, SubtaskState
from shared.models.wire import Interrupt, InterruptOption
from shared.services import hitl_timeouts
from shared.services.agent_jobs import jobstate
from shared.services.agent_jobs.needs import QuestionPorts
from shared.services.notify import events
from shared.services.notify.events import enqueue_quietly
from shared.services.questions import ask_on_chat, waiting_on

APPROVE, REJECT, RESUME, ABORT, ANSWER = "approve", "reject", "resume", "abort", "answer"
ARGS_CHARS = 600


def next_interrupt(state: JobState) -> tuple[JobState, JobInterrupt] | None:
    """The question to show: the one named but not shown yet, or a new one for the first
    waiting subtask."""
    if state.interrupt is not None and state.interrupt.option_id is None:
        return state, state.interrupt
    waiting = next((s for s in state.subtasks if s.status == "waiting"), None)
    if waiting is None:
        return None
    pending = waiting.pending
    purpose = (
        "escalation" if pending is None else "clarification" if pending.question else "approval"
    )
    sid = waiting.subtask.id
    interrupt = JobInterrupt(
        id=f"{state.job.job_id}-{sid}-q{waiting.approvals + 1}", purpose=purpose, subtask_id=sid
    )
    state = jobstate.with_subtask(state, sid, approvals=waiting.approvals + 1)
    return state.model_copy(update={"interrupt": interrupt}), interrupt


def show(deps: QuestionPorts, state: JobState, asked: JobInterrupt) -> bool:
    """Open the interrupt on the chat; False if the chat waits on another question."""
    job, now = state.job, deps.clock.now()
    subtask = state.subtask(asked.subtask_id)
    interrupt = wire_interrupt(state, asked, subtask)
    timeout = None
    if asked.purpose != "escalation":
        timeout = now + timedelta(seconds=deps.settings.approval_timeout_seconds)
    control = waiting_on(interrupt, "job", job.job_id, now, timeout)
    if not ask_on_chat(
        deps.conversations, job.user_id, job.chat_id, control, asked.id, job.turn_id
    ):
        return False
    if timeout is not None:
        task = hitl_timeouts.TimeoutTask(
            user_id=job.user_id, chat_id=job.chat_id, interrupt_id=asked.id
        )
        hitl_timeouts.schedule(deps.settings, deps.tasks, task, timeout)
    escalation = asked.purpose == "escalation"
    told = events.question_tasks(
        deps.settings, job.user_id, job.chat_id, interrupt, now, timeout, escalation
    )
    enqueue_quietly(deps.tasks, told)
    return True


def wire_interrupt(state: JobState, asked: JobInterrupt, subtask: SubtaskState) -> Interrupt:
    goal, pending = subtask.subtask.goal, subtask.pending
    if asked.purpose == "approval" and pending is not None:
        return Interrupt(
            id=asked.id,
            kind="approval",
            question=f"For “{goal}”, may I run {pending.tool}?\n{pending.args[:ARGS_CHARS]}",
            options=[
                InterruptOption(id=APPROVE, label="Yes, go ahead"),
                InterruptOption(id=REJECT, label="No"),
            ],
        )
    if asked.purpose == "clarification" and pending is not None:
        return Interrupt(
            id=asked.id,
            kind="clarification",
            question=f"For “{goal}”: {pending.question}",
            options=[InterruptOption(id=ANSWER, label="Answer")],
        )
    verdict = next(
        (w.verdict for w in reversed(state.whispers) if w.subtask_id == subtask.subtask.id),
        "no progress",
    )
    return Interrupt(
        id=asked.id,
        kind="approval",
        question=f"The {subtask.subtask.agent} agent seems stuck on “{goal}” ({verdict}). "
        "Shall it go on?",
        options=[
            InterruptOption(id=RESUME, label="Go on"),
            InterruptOption(id=ABORT, label="Stop the job"),
        ],
    )
