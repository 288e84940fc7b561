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
# A mail header's text: no control characters, so no CR/LF can start a header of its own.
HeaderText = Annotated[
    str,
    StringConstraints(
        strip_whitespace=True, min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]*$"
    ),
]
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


# An RFC 5545 RRULE value (no "RRULE:" prefix), repeating daily at most often: a rule that
# fires every minute would expand into millions of entries in a subscriber's calendar.
Recurrence = Annotated[
    str,
    StringConstraints(
        max_length=200,
        pattern=r"^(FREQ=(DAILY|WEEKLY|MONTHLY|YEARLY)(;(INTERVAL|COUNT|UNTIL|BYDAY|BYMONTHDAY"
        r"|BYMONTH|BYSETPOS|WKST)=[A-Z0-9,+-]{1,60})*)?$",
    ),
]


class CalendarEvent(Strict):
    id: RecordId
    title: ShortText
    start: AwareDatetime
    end: AwareDatetime
    location: ShortText | None = None
    recurrence: Recurrence = ""  # "": once; else an RRULE such as "FREQ=WEEKLY;BYDAY=MO"
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


MAX_EMAIL_BODY = 10000  # characters: a message a person writes, not a file


class OutboundEmail(Strict):
    channel: Literal["email"] = "email"
    to: list[EmailAddress] = Field(min_length=1, max_length=10)
    subject: HeaderText
    body: Annotated[str, StringConstraints(min_length=1, max_length=MAX_EMAIL_BODY)]
    reply_to: EmailAddress | None = None  # the user's own address: replies reach them


# pending: recorded, not yet handed to the relay (or the run died while it was);
# sent: the relay accepted it; failed: refused or never reached (nothing went out);
# unknown: the data went out and no answer came, so it may or may not have been sent.
DeliveryStatus = Literal["pending", "sent", "failed", "unknown"]
SETTLED: frozenset[str] = frozenset({"sent", "failed", "unknown"})


class RelayAnswer(Strict):
    """What a mail relay made of one message (``Mailer.deliver``)."""

    status: Literal["sent", "failed", "unknown"]
    code: int | None = None  # the SMTP reply code, None when none came
    reply: Annotated[str, StringConstraints(max_length=1000)] = ""


class SentMessage(Strict):
    """The outbox's record of one send: what was sent, when, by which provider, and what the
    relay answered."""

    id: str  # the idempotency key's digest
    idempotency_key: str = Field(min_length=1, max_length=1500)
    message: OutboundEmail
    sent_at: AwareDatetime  # when the send was recorded (before delivery)
    provider: str
    status: DeliveryStatus = "sent"  # records older than delivery were sent by recording
    message_id: str = Field(default="", max_length=200)  # the Message-ID header
    relay_code: int | None = None
    relay_reply: Annotated[str, StringConstraints(max_length=1000)] = ""
    settled_at: AwareDatetime | None = None


class WebResult(Strict):
    """One hit of a web search provider that returns hits (``WebFindings.of_results``)."""

    title: Annotated[str, StringConstraints(max_length=300)]
    url: Annotated[str, StringConstraints(pattern=r"^https?://", max_length=2000)]
    snippet: Annotated[str, StringConstraints(max_length=1000)] = ""


# A link a client may show and open: https only (no javascript:, data:, http: or
# whitespace and quotes that could leave an attribute).
HttpsUrl = Annotated[str, StringConstraints(pattern=r"^https://[^\s<>\"'`]+$", max_length=2000)]
SourceTitle = Annotated[
    str, StringConstraints(strip_whitespace=True, max_length=300, pattern=r"^[^\x00-\x1f\x7f]*$")
]
MAX_SOURCES = 20
MAX_SUGGESTIONS_HTML = 50_000


class WebSource(Strict):
    """A page an answer is grounded in, as the user sees it: its title and link."""

    title: SourceTitle
    uri: HttpsUrl


def https_sources(pairs: list[tuple[str, str]], limit: int = MAX_SOURCES) -> list[WebSource]:
    """The (title, uri) pairs that are safe to show, first of each link kept: anything but
    an https link is dropped, titles cut and cleaned of control characters."""
    kept: dict[str, WebSource] = {}
    for title, uri in pairs:
        clean = "".join(c for c in title if c.isprintable())[:300].strip()
        try:
            source = WebSource(title=clean or uri[:300], uri=uri)
        except ValueError:
            continue
        kept.setdefault(source.uri, source)
    return list(kept.values())[:limit]


class WebFindings(Strict):
    """What a ``WebSearch`` provider found: an answer grounded in the web (empty for a
    provider that only lists hits), its sources, the queries it ran, and the search
    suggestions (Google's HTML widget, which Google requires clients to show with a
    grounded answer). The cost is the provider's, to count in the job's budget."""

    answer: Annotated[str, StringConstraints(max_length=8000)] = ""
    sources: list[WebSource] = Field(default_factory=list, max_length=MAX_SOURCES)
    queries: list[Annotated[str, StringConstraints(max_length=500)]] = Field(
        default_factory=list, max_length=20
    )
    suggestions_html: Annotated[str, StringConstraints(max_length=MAX_SUGGESTIONS_HTML)] = ""
    snippets: list[WebResult] = Field(default_factory=list, max_length=MAX_SOURCES)
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    grounded_prompts: int = Field(default=0, ge=0)  # billed apart from tokens
    search_queries: int = Field(default=0, ge=0)  # Gemini 3 grounding bills per query

    @classmethod
    def of_results(cls, results: list[WebResult]) -> WebFindings:
        """For a provider of plain hits: the hits, and their https links as sources."""
        pairs = [(r.title, r.url) for r in results]
        return cls(sources=https_sources(pairs), snippets=results[:MAX_SOURCES])
