"""Wire models of the user's things as the web client's views read them (``/v1/calendarEvents``,
``/v1/notes``, ``/v1/expenses``, ``/v1/budgets``): the records the domain agents keep
(``shared.models.agent_data``), in pages, and the query each list takes.

The agents write these records; the API reads and deletes them (no etag: there is no edit
through the API to race with)."""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AwareDatetime, Field, field_validator, model_validator

from shared.models.agent_data import Budget, CalendarEvent, Expense, Note
from shared.models.base import Strict
from shared.rest.paging import PageQuery

MAX_WINDOW_DAYS = 62  # a calendar view shows a day, a week or a month
MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


class CalendarEventList(Strict):
    calendar_events: list[CalendarEvent]  # by start, earliest first
    next_page_token: str


class NoteList(Strict):
    notes: list[Note]  # newest first
    next_page_token: str


class ExpenseList(Strict):
    expenses: list[Expense]  # by spent_at, earliest first
    next_page_token: str


class BudgetList(Strict):
    budgets: list[Budget]  # by category
    next_page_token: str


class EventsQuery(PageQuery):
    start: AwareDatetime
    end: AwareDatetime

    @model_validator(mode="after")
    def _short_window(self) -> EventsQuery:
        if self.end <= self.start:
            raise ValueError("end must be after start")
        if (self.end - self.start).days > MAX_WINDOW_DAYS:
            raise ValueError(f"a window of at most {MAX_WINDOW_DAYS} days")
        return self


class NotesQuery(PageQuery):
    query: str = Field(default="", max_length=200)  # words every note listed contains


class ExpensesQuery(PageQuery):
    month: str = Field(pattern=MONTH.pattern)  # YYYY-MM, in time_zone
    time_zone: str = Field(default="UTC", max_length=64)

    @field_validator("time_zone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError("not an IANA time zone") from exc
        return value

    def window(self) -> tuple[datetime, datetime]:
        """The month's first instant and the next month's, in the user's zone."""
        year, month = (int(part) for part in self.month.split("-"))
        zone = ZoneInfo(self.time_zone)
        after = (year + 1, 1) if month == 12 else (year, month + 1)
        return datetime(year, month, 1, tzinfo=zone), datetime(*after, 1, tzinfo=zone)
