"""Wire models of the user's things as the web client's views read them (``/v1/calendarEvents``,
``/v1/notes``, ``/v1/expenses``, ``/v1/budgets``): the records the domain agents keep
(``shared.models.agent_data``), in pages (their queries: ``shared.app.settings.queries``).

The agents write these records; the API reads and deletes them, and edits a note's title
and text (with its etag)."""

from __future__ import annotations

from pydantic import AwareDatetime, Field

from shared.models.agent_data import Budget, CalendarEvent, Expense, Note, NoteText, ShortText
from shared.models.base import Strict, digest_of


class CalendarEventView(CalendarEvent):
    etag: str  # of what the user may edit: a PATCH naming an older one is 412 stale_etag


class CalendarEventPatch(Strict):
    """The fields present change; the result must still end after it starts."""

    title: ShortText | None = None
    start: AwareDatetime | None = None
    end: AwareDatetime | None = None
    location: ShortText | None = None
    etag: str | None = Field(default=None, min_length=1, max_length=64)


class CalendarEventList(Strict):
    calendar_events: list[CalendarEventView]  # by start, earliest first
    next_page_token: str


def event_etag(event: CalendarEvent) -> str:
    return digest_of(event.title, event.start, event.end, event.location)


class NoteView(Note):
    etag: str  # of the title and text: a PATCH naming an older one is 412 stale_etag


class NotePatch(Strict):
    """The fields present change (a note has no update_mask: two fields, both required)."""

    title: ShortText | None = None
    text: NoteText | None = None
    etag: str | None = Field(default=None, min_length=1, max_length=64)


class NoteList(Strict):
    notes: list[NoteView]  # newest first
    next_page_token: str


def note_etag(note: Note) -> str:
    return digest_of(note.title, note.text)


class ExpenseList(Strict):
    expenses: list[Expense]  # by spent_at, earliest first
    next_page_token: str


class BudgetList(Strict):
    budgets: list[Budget]  # by category
    next_page_token: str
