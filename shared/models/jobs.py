"""An agent job: its plan (``AgentJob``: subtasks in dependency order, as a turn hands it off)
and its document (``users/{uid}/jobs/{job_id}``): what the running job has done so far.

It is written when a subtask finishes, when the job pauses or waits, and when it ends, so a
redelivered or taken-over job continues from it without redoing finished subtasks. A
subtask's step transcript is kept only while it is suspended (waiting for an approval,
paused); a subtask interrupted by a crash starts again from its first step.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from shared.models.agent_data import MAX_SOURCES, MAX_SUGGESTIONS_HTML, WebSource
from shared.models.base import MAX_PLANNED_SUBTASKS, SUBTASK_ID_PATTERN, Strict
from shared.models.domain import ToolCall
from shared.models.history import JobOrigin

SubtaskStatus = Literal["pending", "running", "waiting", "done", "failed", "skipped"]
JobStatus = Literal["running", "waiting", "paused", "stalled", "done", "aborted", "cancelled"]
Verdict = Literal["OK", "SPIRALING", "DRIFT", "STALLING", "SHALLOW"]
Control = Literal["none", "pause", "cancel"]
InterruptPurpose = Literal["approval", "escalation", "clarification"]

FINISHED: frozenset[str] = frozenset({"done", "aborted", "cancelled"})
SETTLED: frozenset[str] = frozenset({"done", "failed", "skipped"})  # of a subtask


JobType = Literal["research", "data", "critical", "default"]


class Subtask(Strict):
    """One agent's part of a job. ``depends_on`` names subtasks of the same job whose
    results it needs (they run first and their results are given to it)."""

    id: str = Field(pattern=SUBTASK_ID_PATTERN)
    agent: str
    goal: str = Field(min_length=1, max_length=2000)
    role: str | None = None  # None: the agent's own role
    depends_on: list[str] = Field(default_factory=list)
    inputs: dict[str, str] = Field(default_factory=dict)  # e.g. results of inline steps
    required: bool = False  # a refused sensitive action aborts the job instead of skipping
    call: ToolCall | None = None  # made without a model step (the plan read the command)


class JobResume(Strict):
    """A continuation: the answer to the interrupt the job waits on (claimed once)."""

    interrupt_id: str
    option_id: str
    source: Literal["user", "timeout"] = "user"
    answer: str = ""  # free text, for a clarification


class AgentJob(Strict):
    """Payload published to the agent-jobs topic for ``functions/agents``.

    ``subtasks`` form a DAG (validated: known ids, no cycle). The shorthand ``agent`` +
    ``goal`` without ``subtasks`` is a job of one subtask ``s1``; a job of one subtask
    always carries its agent and goal in both places. ``resume`` marks a continuation of
    a job that waits on an interrupt; ``budget_tokens`` None takes the Settings default.
    ``origin`` (set by the turn) is what the execution memory records once the job ends.
    """

    job_id: str
    user_id: str
    chat_id: str
    turn_id: str
    agent: str = ""
    goal: str = ""  # the job's overall goal (the user's request)
    subtasks: list[Subtask] = Field(default_factory=list, max_length=MAX_PLANNED_SUBTASKS)
    job_type: JobType = "default"
    budget_tokens: int | None = Field(default=None, ge=1)
    resume: JobResume | None = None
    origin: JobOrigin | None = None  # the request and plan, for the execution memory
    created_at: datetime

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        subtasks = data.get("subtasks") or []
        if not subtasks and data.get("agent"):
            one = {"id": "s1", "agent": data["agent"], "goal": data.get("goal") or ""}
            return {**data, "subtasks": [one]}
        if len(subtasks) == 1:
            only = subtasks[0]
            first = only.model_dump() if isinstance(only, BaseModel) else dict(only)
            return {
                **data,
                "agent": data.get("agent") or first.get("agent", ""),
                "goal": data.get("goal") or first.get("goal", ""),
            }
        return data

    @model_validator(mode="after")
    def _dag(self) -> AgentJob:
        if not self.subtasks:
            raise ValueError("a job needs at least one subtask")
        order = dag_order(self.subtasks)
        if order is None:
            raise ValueError("subtask ids must be unique; depends_on must name others, no cycle")
        return self


def dag_order(subtasks: Sequence[Subtask]) -> list[str] | None:
    """The ids in an order where every subtask follows what it depends on; None if the ids
    repeat, a dependency is unknown or the dependencies form a cycle."""
    deps = {s.id: set(s.depends_on) for s in subtasks}
    if len(deps) != len(subtasks) or any(
        d not in deps or d == sid for sid, ds in deps.items() for d in ds
    ):
        return None
    order: list[str] = []
    while deps:
        ready = sorted(sid for sid, ds in deps.items() if not ds - set(order))
        if not ready:
            return None
        order += ready
        for sid in ready:
            del deps[sid]
    return order


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
