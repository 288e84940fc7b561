"""What the domain agents keep and use: their records, calendar feeds, web search, jobs and
past executions."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Protocol, TypeVar

from shared.models.agent_data import (
    Budget,
    CalendarEvent,
    Expense,
    Feedback,
    Note,
    RecordKind,
    WebFindings,
)
from shared.models.calendar_feed import FeedGrant
from shared.models.history import (
    Advice,
    Execution,
    ExecutionDraft,
    FeedbackKind,
    HistoryQuery,
    StrategyFeedback,
)
from shared.models.jobs import JobState
from shared.ports.infra import Keyset

R = TypeVar("R")


class AgentDataStore(Protocol):
    """What the domain agents keep for a user: calendar events, notes, budgets, expenses
    and feedback (reminders: ``ReminderStore``). Every call is scoped to ``user_id``.
    ``put_*`` creates or replaces the record of that id (the tools derive ids from the job,
    so a replayed call writes the same record); every list and search takes a ``limit`` of
    1..``MAX_PAGE`` (ValueError otherwise) and never returns more."""

    def put_event(self, user_id: str, event: CalendarEvent) -> None: ...

    def list_events(
        self, user_id: str, start: datetime, end: datetime, limit: int
    ) -> list[CalendarEvent]:
        """Events starting in [start, end), earliest first."""
        ...

    def put_note(self, user_id: str, note: Note) -> None: ...

    def search_notes(self, user_id: str, query: str, limit: int) -> list[Note]:
        """Notes whose title or text contains every word of ``query`` (case folded), newest
        first, among the user's newest ``NOTE_SCAN`` notes."""
        ...

    def put_budget(self, user_id: str, budget: Budget) -> None:
        """One budget per category: replaces the category's earlier one."""
        ...

    def get_budget(self, user_id: str, category: str) -> Budget | None: ...

    def list_budgets(self, user_id: str, limit: int) -> list[Budget]:
        """By category name."""
        ...

    def put_expense(self, user_id: str, expense: Expense) -> None: ...

    def list_expenses(
        self, user_id: str, start: datetime, end: datetime, limit: int
    ) -> list[Expense]:
        """Expenses spent in [start, end), earliest first."""
        ...

    def put_feedback(self, user_id: str, feedback: Feedback) -> None: ...

    def list_feedback(self, user_id: str, limit: int) -> list[Feedback]:
        """Newest first."""
        ...

    def list_notes(self, user_id: str, limit: int) -> list[Note]:
        """The newest notes, newest first."""
        ...

    def get_note(self, user_id: str, note_id: str) -> Note | None: ...

    def get_event(self, user_id: str, event_id: str) -> CalendarEvent | None: ...

    def delete_record(self, user_id: str, kind: RecordKind, record_id: str) -> bool:
        """Delete the user's event, note or expense of that id; False when there was none."""
        ...

    def fenced(self, since: datetime) -> AgentDataStore:
        """The same store for work created at ``since`` (an agent job): its writes are
        refused with ``AccountErased`` (nothing written) while the account is erased and
        once an erasure finished after ``since``."""
        ...


class CalendarFeedStore(Protocol):
    """Each user's calendar feed grant (``shared.models.calendar_feed``), and the lookup of
    a feed URL's token digest to its owner."""

    def get_feed(self, user_id: str) -> FeedGrant | None: ...

    def put_feed(self, user_id: str, grant: FeedGrant) -> FeedGrant:
        """Store ``grant`` unless the user has one (then return that one, unchanged):
        enabling twice (a double click) issues one URL."""
        ...

    def replace_feed(self, user_id: str, grant: FeedGrant) -> FeedGrant:
        """Store ``grant`` in place of any other: the earlier URL stops at once."""
        ...

    def delete_feed(self, user_id: str) -> None:
        """Turn the feed off; its URL stops at once. Nothing to delete is no error."""
        ...

    def feed_owner(self, digest: str) -> str | None:
        """The user whose current grant has this token digest, else None (unknown, revoked,
        rotated, or the account erased)."""
        ...


class WebSearch(Protocol):
    """A web search provider for the research agent (Gemini grounded in Google Search in
    production, ``shared.adapters.vertex_grounding``; another provider fits the same
    shape). None configured: the ``web_search`` tool is not offered."""

    def search(self, query: str, limit: int) -> WebFindings:
        """At most ``limit`` sources. ``WebSearchUnavailable`` when this deployment cannot
        reach the web (the local model service), so the agent says so."""
        ...


class JobStore(Protocol):
    """Agent job documents (``shared.models.jobs``), one per job under its user."""

    def get(self, user_id: str, job_id: str) -> JobState | None: ...

    def list_jobs(self, user_id: str, limit: int, after: Keyset | None = None) -> list[JobState]:
        """The user's ``limit`` most recently updated jobs (finished ones until their TTL),
        by ``(updated_at, job_id)`` descending; ``after``: only those past that position."""
        ...

    def update(
        self,
        user_id: str,
        job_id: str,
        change: Callable[[JobState | None], tuple[R, JobState | None]],
    ) -> R:
        """Read the job and write what ``change`` returns (None: write nothing) in one
        transaction; return ``change``'s result. ``change`` may run more than once (a
        contended transaction is retried), so it must not act outside its return value."""
        ...


class ExecutionMemory(Protocol):
    """The supervisor's memory of finished jobs, per user (``shared.models.history``).

    Rows past their ``expires_at`` are invisible to every read and are purged as new ones
    are written. Account erasure removes everything (``forget_all``, and the data key)."""

    def record(self, draft: ExecutionDraft, issued_at: datetime) -> bool:
        """Store one job's execution, with a ``rejected_step`` feedback per refused
        interrupt, once: False (nothing written) when the job was recorded before, or the
        user erased the account at or after ``issued_at`` (when the job was made)."""
        ...

    def related(self, user_id: str, query: HistoryQuery, now: datetime) -> list[Execution]:
        """Every live run of the strategies of the ``query.limit`` runs nearest to the
        query, each with its ``similarity`` (cosine) and its strategy's ``penalties``;
        nearest first."""
        ...

    def add_feedback(self, feedback: StrategyFeedback) -> bool:
        """Count the user's word against a strategy once per key; False if the key was
        counted already or the job named has no recorded execution."""
        ...

    def list_executions(self, user_id: str, now: datetime, limit: int) -> list[Execution]:
        """The user's live executions, newest first, at most ``limit`` (1..1000)."""
        ...

    def forget_strategy(self, user_id: str, strategy_id: str) -> int:
        """Delete the strategy's runs and feedback; how many runs were deleted."""
        ...

    def forget_all(self, user_id: str) -> int:
        """Delete every run and feedback of the user; how many runs were deleted."""
        ...


class DecompositionAdvisor(Protocol):
    """Asked by the planner before its model call; told of the user's feedback."""

    def advise(self, user_id: str, request: str, language: str) -> Advice:
        """A suggestion from the user's similar past executions. Never fails for an
        outage: without its stores it suggests nothing (``source="planned"``)."""
        ...

    def feedback(
        self,
        user_id: str,
        key: str,
        kind: FeedbackKind,
        *,
        strategy_id: str | None = None,
        job_id: str | None = None,
    ) -> bool:
        """Mark a strategy down once per ``key``: named, or as the strategy of a job."""
        ...
