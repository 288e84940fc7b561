"""Wire models of the user's things as the web client's views read them (``/v1/calendarEvents``,
``/v1/notes``, ``/v1/expenses``, ``/v1/budgets``): the records the domain agents keep
(``shared.models.agent_data``), in pages (their queries: ``shared.app.settings.queries``).

The agents write these records; the API reads and deletes them (no etag: there is no edit
through the API to race with)."""

from __future__ import annotations

from shared.models.agent_data import Budget, CalendarEvent, Expense, Note
from shared.models.base import Strict


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
