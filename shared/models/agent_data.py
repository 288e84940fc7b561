"""The records the domain agents keep for a user (``AgentDataStore``) and the messages they
send on the user's behalf (``Outbox``).

Every text is bounded, every time is timezone-aware, money is an integer of the currency's
minor unit (``shared.models.money``). Ids are chosen by the caller (the agents' tools derive
them from the job, so a replayed tool call writes the same record again, not a second one).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AwareDatetime, BeforeValidator, Field, StringConstraints, model_validator

from shared.models.base import Strict
from shared.models.money import MAX_MINOR, Currency

RecordId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
ShortText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
NoteText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=5000)]


def _folded(value: object) -> object:
    return value.strip().lower() if isinstance(value, str) else value


# "Food " and "food" are one category; the name is also its budget's document id.
Category = Annotated[
    str,
    BeforeValidator(_folded),
    StringConstraints(min_length=1, max_length=40, pattern=r"^[a-z0-9][a-z0-9 &_-]*$"),
]
EmailAddress = Annotated[
    str,
    StringConstraints(
        strip_whitespace=True,
        max_length=254,
        pattern=r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}"
        r"[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$",
    ),
]

# The records a user may delete from the client's views (reminders are cancelled instead).
RecordKind = Literal["events", "notes", "expenses"]

MAX_PAGE = 1000  # the largest ``limit`` any list or search of the stores accepts
MAX_EVENT_DAYS = 14  # an event longer than this is a mistake, not a calendar entry


ReminderState = Literal["pending", "fired", "done", "cancelled"]
OPEN_STATES: tuple[ReminderState, ...] = ("pending", "fired")


class Reminder(Strict):
    """A reminder rings at ``due_at`` (UTC). ``time_zone`` is the user's zone when it was
    set: a recurrence (an RFC 5545 RRULE, "" for one-off) repeats in that zone's wall time.
    ``version`` grows with every change of when or whether it rings (edit, snooze, cancel):
    a delivery task carries the version it was made for, and an older one does nothing."""

    id: RecordId
    text: ShortText
    due_at: AwareDatetime
    time_zone: str = Field(default="UTC", min_length=1, max_length=64)
    recurrence: str = Field(default="", max_length=500)
    state: ReminderState = "pending"
    urgent: bool = False
    version: int = Field(default=1, ge=1)
    created_at: AwareDatetime
    updated_at: AwareDatetime | None = None
    completed_at: AwareDatetime | None = None
    fired_at: AwareDatetime | None = None  # the last time it rang
    # A recurring reminder's first occurrence: the series repeats from it, whatever a snooze
    # did to ``due_at``.
    anchor_at: AwareDatetime | None = None

    @property
    def done(self) -> bool:
        return self.state == "done"

    @property
    def open(self) -> bool:
        return self.state in OPEN_STATES


class CalendarEvent(Strict):
    id: RecordId
    title: ShortText
    start: AwareDatetime
    end: AwareDatetime
    location: ShortText | None = None
    created_at: AwareDatetime

    @model_validator(mode="after")
    def _sane_span(self) -> CalendarEvent:
        if self.end <= self.start:
            raise ValueError("end must be after start")
        if (self.end - self.start).days >= MAX_EVENT_DAYS:
            raise ValueError(f"an event lasts less than {MAX_EVENT_DAYS} days")
        return self


class Note(Strict):
    id: RecordId
    title: ShortText
    text: NoteText
    created_at: AwareDatetime


class Budget(Strict):
    """The monthly limit of one spending category (one per category, in one currency)."""

    category: Category
    currency: Currency
    monthly_limit_minor: int = Field(ge=0, le=MAX_MINOR)
    updated_at: AwareDatetime


class Expense(Strict):
    id: RecordId
    amount_minor: int = Field(gt=0, le=MAX_MINOR)
    currency: Currency
    category: Category
    description: ShortText | None = None
    spent_at: AwareDatetime
    created_at: AwareDatetime


class Feedback(Strict):
    """What the user said about the assistant (the feedback agent records it, no model call)."""

    id: RecordId
    text: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]
    rating: int | None = Field(default=None, ge=1, le=5)
    chat_id: str | None = Field(default=None, max_length=64)
    created_at: AwareDatetime


class OutboundEmail(Strict):
    channel: Literal["email"] = "email"
    to: list[EmailAddress] = Field(min_length=1, max_length=10)
    subject: ShortText
    body: Annotated[str, StringConstraints(min_length=1, max_length=10000)]


class SentMessage(Strict):
    """The outbox's record of one send: what was sent, when, and by which provider."""

    id: str  # the idempotency key's digest
    idempotency_key: str = Field(min_length=1, max_length=1500)
    message: OutboundEmail
    sent_at: AwareDatetime
    provider: str


class WebResult(Strict):
    """One hit of a web search provider (``WebSearch``)."""

    title: Annotated[str, StringConstraints(max_length=300)]
    url: Annotated[str, StringConstraints(pattern=r"^https?://", max_length=2000)]
    snippet: Annotated[str, StringConstraints(max_length=1000)] = ""
