"""The user's things the agents recorded, read and deleted from the client's views:
calendar events by window, notes (all or by words), expenses by month, budgets.

Each list reads at most ``MAX_READ`` records from the store and pages them with a keyset
(``keyset_page``), so a record added between pages is neither skipped nor repeated.
Another user's id is answered like a missing one (404 ``not_found``); a second DELETE too.
"""

from __future__ import annotations

from typing import Protocol

from shared.app.settings.paged import Limits, Paging, instant, keyset_page
from shared.app.settings.queries import EventsQuery, ExpensesQuery, NotesQuery
from shared.errors import NotFound
from shared.models.agent_data import MAX_PAGE, CalendarEvent, Note, RecordId, RecordKind
from shared.models.base import Strict
from shared.models.memory_api import DeletedResponse
from shared.models.things_v1 import (
    BudgetList,
    CalendarEventList,
    CalendarEventPatch,
    CalendarEventView,
    ExpenseList,
    NoteList,
    NotePatch,
    NoteView,
    event_etag,
    note_etag,
)
from shared.ports import AgentDataStore, Clock
from shared.rest import etags
from shared.rest.paging import PageQuery, PageTokens, scope_of
from shared.rest.routes import validated

THINGS = Limits(default=100, maximum=500)
MAX_READ = MAX_PAGE
NOT_FOUND = {"events": "calendar event", "notes": "note", "expenses": "expense"}


class ThingsPorts(Protocol):
    @property
    def agent_data(self) -> AgentDataStore: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def page_tokens(self) -> PageTokens: ...


class _Id(Strict):
    id: RecordId


class ThingsAdmin:
    def __init__(self, deps: ThingsPorts) -> None:
        self._deps = deps

    def _paging(self, user_id: str, query: PageQuery, scope: str) -> Paging:
        now = self._deps.clock.now()
        return Paging.of(self._deps.page_tokens, user_id, scope, query, THINGS, now)

    def events(self, user_id: str, query: EventsQuery) -> CalendarEventList:
        scope = scope_of("calendarEvents", start=query.start, end=query.end)
        paging = self._paging(user_id, query, scope)
        found = self._deps.agent_data.list_events(user_id, query.start, query.end, MAX_READ)
        page = keyset_page(found, lambda e: (instant(e.start), e.id), paging)
        views = [_event_view(e) for e in page.items]
        return CalendarEventList(calendar_events=views, next_page_token=page.next_page_token)

    def patch_event(
        self, user_id: str, event_id: str, patch: CalendarEventPatch, if_match: str | None
    ) -> CalendarEventView:
        """A new title, time or place (checked like the agent's entry: it ends after it
        starts, within 14 days). The etag check is not atomic with the write, as notes'."""
        checked = validated(_Id, {"id": event_id}, "id").id
        event = self._deps.agent_data.get_event(user_id, checked)
        if event is None:
            raise NotFound("calendar event not found")
        etags.check(etags.wanted(if_match, patch.etag), event_etag(event))
        change = patch.model_dump(exclude_none=True, exclude={"etag"})
        edited = validated(CalendarEvent, {**event.model_dump(), **change}, "event")
        self._deps.agent_data.put_event(user_id, edited)
        return _event_view(edited)

    def notes(self, user_id: str, query: NotesQuery) -> NoteList:
        paging = self._paging(user_id, query, scope_of("notes", query=query.query))
        store = self._deps.agent_data
        if query.query.strip():
            found = store.search_notes(user_id, query.query, MAX_READ)
        else:
            found = store.list_notes(user_id, MAX_READ)
        page = keyset_page(found, lambda n: (instant(n.created_at), n.id), paging, True)
        views = [_note_view(n) for n in page.items]
        return NoteList(notes=views, next_page_token=page.next_page_token)

    def patch_note(
        self, user_id: str, note_id: str, patch: NotePatch, if_match: str | None
    ) -> NoteView:
        """A new title and/or text. The etag is checked just before the write (not atomic
        with it: an agent's rewrite slipping in between is replaced, as a moment later)."""
        checked = validated(_Id, {"id": note_id}, "id").id
        note = self._deps.agent_data.get_note(user_id, checked)
        if note is None:
            raise NotFound("note not found")
        etags.check(etags.wanted(if_match, patch.etag), note_etag(note))
        change = patch.model_dump(exclude_none=True, exclude={"etag"})
        edited = note.model_copy(update=change)
        self._deps.agent_data.put_note(user_id, edited)
        return _note_view(edited)

    def expenses(self, user_id: str, query: ExpensesQuery) -> ExpenseList:
        scope = scope_of("expenses", month=query.month, time_zone=query.time_zone)
        paging = self._paging(user_id, query, scope)
        start, end = query.window()
        found = self._deps.agent_data.list_expenses(user_id, start, end, MAX_READ)
        page = keyset_page(found, lambda e: (instant(e.spent_at), e.id), paging)
        return ExpenseList(expenses=page.items, next_page_token=page.next_page_token)

    def budgets(self, user_id: str, query: PageQuery) -> BudgetList:
        paging = self._paging(user_id, query, scope_of("budgets"))
        found = self._deps.agent_data.list_budgets(user_id, MAX_READ)
        page = keyset_page(found, lambda b: (b.category,), paging)
        return BudgetList(budgets=page.items, next_page_token=page.next_page_token)

    def delete(self, user_id: str, kind: RecordKind, record_id: str) -> DeletedResponse:
        checked = validated(_Id, {"id": record_id}, "id").id
        if not self._deps.agent_data.delete_record(user_id, kind, checked):
            raise NotFound(f"{NOT_FOUND[kind]} not found")
        return DeletedResponse()


def _note_view(note: Note) -> NoteView:
    return NoteView(**note.model_dump(), etag=note_etag(note))


def _event_view(event: CalendarEvent) -> CalendarEventView:
    return CalendarEventView(**event.model_dump(), etag=event_etag(event))
