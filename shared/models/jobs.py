"""The job document (``users/{uid}/jobs/{job_id}``): what a running agent job has done so far.

It is written when a subtask finishes, when the job pauses or waits, and when it ends, so a
redelivered or taken-over job continues from it without redoing finished subtasks. A
subtask's step transcript is kept only while it is suspended (waiting for an approval,
paused); a subtask interrupted by a crash starts again from its first step.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from shared.models.agent_data import MAX_SOURCES, MAX_SUGGESTIONS_HTML, WebSource
from shared.models.base import Strict
from shared.models.domain import AgentJob, Subtask

SubtaskStatus = Literal["pending", "running", "waiting", "done", "failed", "skipped"]
JobStatus = Literal["running", "waiting", "paused", "stalled", "done", "aborted", "cancelled"]
Verdict = Literal["OK", "SPIRALING", "DRIFT", "STALLING", "SHALLOW"]
Control = Literal["none", "pause", "cancel"]
InterruptPurpose = Literal["approval", "escalation", "clarification"]

FINISHED: frozenset[str] = frozenset({"done", "aborted", "cancelled"})
SETTLED: frozenset[str] = frozenset({"done", "failed", "skipped"})  # of a subtask


class StepRecord(Strict):
    """One agent step as the agent sees it again on its next step."""

    action: str
    tool: str = ""
    args: str = ""  # JSON object text
    text: str = ""  # the answer, question, message or recruit goal
    result: str = ""  # what came back (tool output, or what the supervisor says)


class PendingAction(Strict):
    """A sensitive tool call (or a question) waiting for the user's answer."""

    tool: str = ""
    args: str = ""
    question: str = ""


class SubtaskState(Strict):
    subtask: Subtask
    status: SubtaskStatus = "pending"
    attempts: int = 0  # runs started, retries included
    result: str = ""
    error: str = ""  # "code: message" of the failure
    transient: bool = False  # failed on a transient error after every retry
    recruited_by: str | None = None
    steps: list[StepRecord] = Field(default_factory=list)  # kept while suspended
    steps_taken: int = 0
    watchdog_level: int = 0  # 0: fine; 1, 2: whispered; 3: escalated
    pending: PendingAction | None = None
    approvals: int = 0  # interrupts this subtask opened (their ids count up)
    # The web pages its answer is grounded in, and the search suggestions to show with it
    sources: list[WebSource] = Field(default_factory=list, max_length=MAX_SOURCES)
    search_suggestions_html: str = Field(default="", max_length=MAX_SUGGESTIONS_HTML)


class MailboxMessage(Strict):
    seq: int  # counts up per job: what a reader has seen
    sender: str  # subtask id, or "supervisor"
    to: str  # subtask id, or "*" for everyone
    text: str
    at: datetime


class Whisper(Strict):
    """A private correction note from the watchdog, given to one subtask's next step."""

    subtask_id: str
    verdict: Verdict
    level: int
    text: str
    at: datetime
    delivered: bool = False


class JobInterrupt(Strict):
    """The one question the job waits on (answered through a continuation, once)."""

    id: str
    purpose: InterruptPurpose
    subtask_id: str
    opened: bool = False  # the chat shows it (``ConversationStore.open_interrupt``)
    open_attempts: int = 0
    option_id: str | None = None  # the answer, once claimed
    answer: str = ""
    source: Literal["user", "timeout"] | None = None


class JobState(Strict):
    job: AgentJob  # as first received (never a continuation)
    status: JobStatus = "running"
    subtasks: list[SubtaskState]
    mailbox: list[MailboxMessage] = Field(default_factory=list)
    mail_seq: int = 0
    whispers: list[Whisper] = Field(default_factory=list)
    interrupt: JobInterrupt | None = None
    answered: list[str] = Field(default_factory=list)  # interrupt ids already consumed
    rejected: list[str] = Field(default_factory=list)  # approvals the user refused (ids)
    control: Control = "none"  # the user's pause or cancel, seen between steps
    tokens_used: int = 0
    web_queries_used: int = 0  # grounded search queries (billed apart from tokens)
    deliveries: int = 0  # deliveries that claimed the job
    lease_owner: str | None = None
    lease_until: datetime | None = None
    outcome: str = ""  # the final report, once finished
    created_at: datetime
    updated_at: datetime

    def subtask(self, subtask_id: str) -> SubtaskState:
        return next(s for s in self.subtasks if s.subtask.id == subtask_id)

    def leased_by_other(self, owner: str, now: datetime) -> bool:
        return (
            self.lease_owner not in (None, owner)
            and self.lease_until is not None
            and self.lease_until > now
        )
