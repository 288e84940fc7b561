"""In-memory ``AgentDataStore`` with the Firestore adapter's semantics (tests/contract)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel

from shared.adapters.agent_data_rules import (
    BUDGETS,
    EVENTS,
    EXPENSES,
    FEEDBACK,
    NOTE_SCAN,
    NOTES,
    check_limit,
    check_window,
    note_matches,
    query_words,
)
from shared.adapters.doc_ids import doc_id
from shared.models.agent_data import (
    Budget,
    CalendarEvent,
    Expense,
    Feedback,
    Note,
    RecordKind,
)

R = TypeVar("R", bound=BaseModel)


class FakeAgentDataStore:
    def __init__(self) -> None:
        self._records: dict[tuple[str, str], dict[str, BaseModel]] = {}
        self._lock = threading.Lock()

    # -- storage ------------------------------------------------------------------------------
    def _put(self, user_id: str, collection: str, record_id: str, record: BaseModel) -> None:
        key = (doc_id(user_id), collection)
        with self._lock:
            self._records.setdefault(key, {})[doc_id(record_id)] = record.model_copy(deep=True)

    def _get(self, user_id: str, collection: str, record_id: str, kind: type[R]) -> R | None:
        with self._lock:
            found = self._records.get((doc_id(user_id), collection), {}).get(doc_id(record_id))
        return kind.model_validate(found.model_dump()) if found is not None else None

    def _all(self, user_id: str, collection: str, kind: type[R]) -> list[R]:
        with self._lock:
            stored = list(self._records.get((doc_id(user_id), collection), {}).items())
        return [kind.model_validate(r.model_dump()) for _, r in sorted(stored, key=_by_id)]

    def _page(
        self,
        user_id: str,
        collection: str,
        kind: type[R],
        limit: int,
        key: Callable[[R], Any],
        keep: Callable[[R], bool] = lambda _: True,
        newest_first: bool = False,
    ) -> list[R]:
        check_limit(limit)
        found = sorted(self._all(user_id, collection, kind), key=key, reverse=newest_first)
        return [record for record in found if keep(record)][:limit]

    # -- calendar events ----------------------------------------------------------------------
    def put_event(self, user_id: str, event: CalendarEvent) -> None:
        self._put(user_id, EVENTS, event.id, event)

    def list_events(
        self, user_id: str, start: datetime, end: datetime, limit: int
    ) -> list[CalendarEvent]:
        check_window(start, end)
        return self._page(
            user_id,
            EVENTS,
            CalendarEvent,
            limit,
            key=lambda e: (e.start, e.id),
            keep=lambda e: start <= e.start < end,
        )

    # -- notes --------------------------------------------------------------------------------
    def put_note(self, user_id: str, note: Note) -> None:
        self._put(user_id, NOTES, note.id, note)

    def search_notes(self, user_id: str, query: str, limit: int) -> list[Note]:
        words, scanned = query_words(query), self._newest_notes(user_id)
        return [note for note in scanned if note_matches(note, words)][: check_limit(limit)]

    def _newest_notes(self, user_id: str) -> list[Note]:
        return self._page(
            user_id, NOTES, Note, NOTE_SCAN, key=lambda n: (n.created_at, n.id), newest_first=True
        )

    # -- budgets and expenses -----------------------------------------------------------------
    def put_budget(self, user_id: str, budget: Budget) -> None:
        self._put(user_id, BUDGETS, budget.category, budget)

    def get_budget(self, user_id: str, category: str) -> Budget | None:
        return self._get(user_id, BUDGETS, category.strip().lower(), Budget)

    def list_budgets(self, user_id: str, limit: int) -> list[Budget]:
        return self._page(user_id, BUDGETS, Budget, limit, key=lambda b: b.category)

    def put_expense(self, user_id: str, expense: Expense) -> None:
        self._put(user_id, EXPENSES, expense.id, expense)

    def list_expenses(
        self, user_id: str, start: datetime, end: datetime, limit: int
    ) -> list[Expense]:
        check_window(start, end)
        return self._page(
            user_id,
            EXPENSES,
            Expense,
            limit,
            key=lambda e: (e.spent_at, e.id),
            keep=lambda e: start <= e.spent_at < end,
        )

    # -- feedback -----------------------------------------------------------------------------
    def put_feedback(self, user_id: str, feedback: Feedback) -> None:
        self._put(user_id, FEEDBACK, feedback.id, feedback)

    def list_feedback(self, user_id: str, limit: int) -> list[Feedback]:
        return self._page(
            user_id,
            FEEDBACK,
            Feedback,
            limit,
            key=lambda f: (f.created_at, f.id),
            newest_first=True,
        )

    def fenced(self, since: datetime) -> FakeAgentDataStore:
        """The fakes know no erasure mark: every write goes through."""
        return self

    # -- the client's views -------------------------------------------------------------------
    def list_notes(self, user_id: str, limit: int) -> list[Note]:
        return self._newest_notes(user_id)[: check_limit(limit)]

    def get_note(self, user_id: str, note_id: str) -> Note | None:
        return self._get(user_id, NOTES, note_id, Note)

    def get_event(self, user_id: str, event_id: str) -> CalendarEvent | None:
        return self._get(user_id, EVENTS, event_id, CalendarEvent)

    def delete_record(self, user_id: str, kind: RecordKind, record_id: str) -> bool:
        with self._lock:
            stored = self._records.get((doc_id(user_id), kind), {})
            return stored.pop(doc_id(record_id), None) is not None


def _by_id(item: tuple[str, BaseModel]) -> str:
    return item[0]
