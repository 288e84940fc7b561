"""``AgentDataStore`` on Firestore (the sync client, injected).

Layout, everything under the user, so account erasure and export (``firestore_account``)
find it with the rest of the user's tree and another user's records are simply not found::

    users/{uid}/events/{id}        title, start, end, location, created_at
    users/{uid}/notes/{id}         title, text, created_at
    users/{uid}/budgets/{category} category, currency, monthly_limit_minor, updated_at
    users/{uid}/expenses/{id}      amount_minor, currency, category, description, spent_at,
                                   created_at
    users/{uid}/feedback/{id}      text, rating, chat_id, created_at

Writes are one ``set`` each (create or replace by id: a replayed tool call is harmless).
Reminders, under ``users/{uid}/reminders``, are ``firestore_reminders``'.

Indexes: every query is a range and/or an order on one field (``start``, ``spent_at``,
``created_at``), served by the automatic single-field indexes; no composite index is
needed. Note search reads the newest
``NOTE_SCAN`` notes and matches words in code (Firestore has no full-text index).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeVar

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.collection import CollectionReference
from google.cloud.firestore_v1.document import DocumentReference
from google.cloud.firestore_v1.query import Query
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
from shared.adapters.firestore_erasure import fenced
from shared.adapters.gcp_errors import firestore_errors, transient_as_unavailable
from shared.models.agent_data import (
    Budget,
    CalendarEvent,
    Expense,
    Feedback,
    Note,
    RecordKind,
)

R = TypeVar("R", bound=BaseModel)


def _decode(kind: type[R], data: dict[str, Any] | None) -> R:
    data = data or {}
    return kind.model_validate({name: data[name] for name in kind.model_fields if name in data})


class FirestoreAgentDataStore:
    def __init__(self, client: firestore.Client, since: datetime | None = None) -> None:
        self._client = client
        self._since = since  # set: writes of work created then, fenced by the erasure mark

    def fenced(self, since: datetime) -> FirestoreAgentDataStore:
        return FirestoreAgentDataStore(self._client, since)

    # -- storage ------------------------------------------------------------------------------
    def _collection(self, user_id: str, name: str) -> CollectionReference:
        user = self._client.collection("users").document(doc_id(user_id))
        collection: CollectionReference = user.collection(name)
        return collection

    def _ref(self, user_id: str, collection: str, record_id: str) -> DocumentReference:
        ref: DocumentReference = self._collection(user_id, collection).document(doc_id(record_id))
        return ref

    def _put(self, user_id: str, ref: DocumentReference, data: dict[str, Any]) -> None:
        if self._since is not None:
            fenced(self._client, user_id, self._since, lambda tx: tx.set(ref, data))
            return
        with transient_as_unavailable("firestore"):
            ref.set(data)

    def _get(self, ref: DocumentReference, kind: type[R]) -> R | None:
        with transient_as_unavailable("firestore"):
            snap = ref.get()
        return _decode(kind, snap.to_dict()) if snap.exists else None

    def _run(self, query: Query, kind: type[R]) -> list[R]:
        with transient_as_unavailable("firestore"):
            return [_decode(kind, snap.to_dict()) for snap in query.stream()]

    def _window(
        self, user_id: str, collection: str, field: str, start: datetime, end: datetime
    ) -> Query:
        check_window(start, end)
        query: Query = (
            self._collection(user_id, collection)
            .where(filter=FieldFilter(field, ">=", start))
            .where(filter=FieldFilter(field, "<", end))
            .order_by(field)
        )
        return query

    def _newest(self, user_id: str, collection: str, limit: int) -> Query:
        query: Query = (
            self._collection(user_id, collection)
            .order_by("created_at", direction=firestore.Query.DESCENDING)
            .limit(check_limit(limit))
        )
        return query

    # -- calendar events ----------------------------------------------------------------------
    def put_event(self, user_id: str, event: CalendarEvent) -> None:
        self._put(user_id, self._ref(user_id, EVENTS, event.id), event.model_dump())

    def list_events(
        self, user_id: str, start: datetime, end: datetime, limit: int
    ) -> list[CalendarEvent]:
        query = self._window(user_id, EVENTS, "start", start, end).limit(check_limit(limit))
        return self._run(query, CalendarEvent)

    # -- notes --------------------------------------------------------------------------------
    def put_note(self, user_id: str, note: Note) -> None:
        self._put(user_id, self._ref(user_id, NOTES, note.id), note.model_dump())

    def search_notes(self, user_id: str, query: str, limit: int) -> list[Note]:
        words = query_words(query)
        check_limit(limit)
        scanned = self._run(self._newest(user_id, NOTES, NOTE_SCAN), Note)
        return [note for note in scanned if note_matches(note, words)][:limit]

    # -- budgets and expenses -----------------------------------------------------------------
    def put_budget(self, user_id: str, budget: Budget) -> None:
        self._put(user_id, self._ref(user_id, BUDGETS, budget.category), budget.model_dump())

    def get_budget(self, user_id: str, category: str) -> Budget | None:
        return self._get(self._ref(user_id, BUDGETS, category.strip().lower()), Budget)

    def list_budgets(self, user_id: str, limit: int) -> list[Budget]:
        query = self._collection(user_id, BUDGETS).order_by("category").limit(check_limit(limit))
        return self._run(query, Budget)

    def put_expense(self, user_id: str, expense: Expense) -> None:
        self._put(user_id, self._ref(user_id, EXPENSES, expense.id), expense.model_dump())

    def list_expenses(
        self, user_id: str, start: datetime, end: datetime, limit: int
    ) -> list[Expense]:
        query = self._window(user_id, EXPENSES, "spent_at", start, end).limit(check_limit(limit))
        return self._run(query, Expense)

    # -- feedback -----------------------------------------------------------------------------
    def put_feedback(self, user_id: str, feedback: Feedback) -> None:
        self._put(user_id, self._ref(user_id, FEEDBACK, feedback.id), feedback.model_dump())

    def list_feedback(self, user_id: str, limit: int) -> list[Feedback]:
        return self._run(self._newest(user_id, FEEDBACK, limit), Feedback)

    # -- the client's views -------------------------------------------------------------------
    def list_notes(self, user_id: str, limit: int) -> list[Note]:
        return self._run(self._newest(user_id, NOTES, limit), Note)

    def get_note(self, user_id: str, note_id: str) -> Note | None:
        return self._get(self._ref(user_id, NOTES, note_id), Note)

    def get_event(self, user_id: str, event_id: str) -> CalendarEvent | None:
        return self._get(self._ref(user_id, EVENTS, event_id), CalendarEvent)

    def delete_record(self, user_id: str, kind: RecordKind, record_id: str) -> bool:
        ref = self._ref(user_id, kind, record_id)

        @firestore.transactional
        def delete(transaction: firestore.Transaction) -> bool:
            if not ref.get(transaction=transaction).exists:
                return False
            transaction.delete(ref)
            return True

        with firestore_errors():
            deleted: bool = delete(self._client.transaction())
        return deleted
