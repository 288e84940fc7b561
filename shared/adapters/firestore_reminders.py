"""``ReminderStore`` on Firestore: the reminders that ring, and their delivery bookkeeping.

The documents are the agents' (``users/{uid}/reminders/{id}``, see
``firestore_agent_data``), with two fields kept beside the reminder's own:

    open_due_at      = due_at while the reminder is open (pending or fired): the open list
    unqueued_due_at  = due_at while it is pending and no delivery task holds its version:
                       the sweep's collection-group query (single-field index, no composite)
    done_at          = completed_at once done: the done list

Every change is one transaction over the document (``change``, ``fire``), so concurrent
edits, snoozes and deliveries are serialised; ``fire`` writes the reminder and the inbox's
notification in the same commit, after reading the account's erasure mark: nothing rings
into an account being erased.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.collection import CollectionReference
from google.cloud.firestore_v1.document import DocumentReference

from shared.adapters.agent_data_rules import REMINDERS, reminder_data
from shared.adapters.doc_ids import doc_id
from shared.adapters.firestore_erasure import blocks, erasure_ref
from shared.adapters.firestore_keyset import keyset_query
from shared.adapters.firestore_notifications import NOTIFICATIONS, notification_data
from shared.adapters.firestore_tx import run_transaction
from shared.adapters.gcp_errors import firestore_errors, transient_as_unavailable
from shared.models.agent_data import Reminder
from shared.models.notifications import Notification
from shared.ports import DueReminder, Keyset, Ring

OPEN_DUE, UNQUEUED_DUE, DONE_AT = "open_due_at", "unqueued_due_at", "done_at"


def decode(data: dict[str, Any] | None) -> Reminder:
    data = dict(data or {})
    if "state" not in data and "done" in data:  # written before reminders had a state
        data["state"] = "done" if data["done"] else "pending"
    return Reminder.model_validate({k: data[k] for k in Reminder.model_fields if k in data})


class FirestoreReminderStore:
    def __init__(self, client: firestore.Client) -> None:
        self._client = client

    def _collection(self, user_id: str) -> CollectionReference:
        user = self._client.collection("users").document(doc_id(user_id))
        collection: CollectionReference = user.collection(REMINDERS)
        return collection

    def _ref(self, user_id: str, reminder_id: str) -> DocumentReference:
        ref: DocumentReference = self._collection(user_id).document(doc_id(reminder_id))
        return ref

    def create(self, user_id: str, reminder: Reminder) -> tuple[Reminder, bool]:
        ref = self._ref(user_id, reminder.id)

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> tuple[Reminder, bool]:
            snap = ref.get(transaction=transaction)
            if snap.exists:
                return decode(snap.to_dict()), False
            transaction.set(ref, reminder_data(reminder, queued=False))
            return reminder, True

        with firestore_errors():
            made: tuple[Reminder, bool] = run_transaction(self._client, run)
        return made

    def get(self, user_id: str, reminder_id: str) -> Reminder | None:
        with transient_as_unavailable("firestore"):
            snap = self._ref(user_id, reminder_id).get()
        return decode(snap.to_dict()) if snap.exists else None

    def list_open(self, user_id: str, limit: int, after: Keyset | None = None) -> list[Reminder]:
        query = keyset_query(self._collection(user_id), OPEN_DUE, limit, after, descending=False)
        with transient_as_unavailable("firestore"):
            return [decode(snap.to_dict()) for snap in query.stream()]

    def list_done(self, user_id: str, limit: int, after: Keyset | None = None) -> list[Reminder]:
        query = keyset_query(self._collection(user_id), DONE_AT, limit, after, descending=True)
        with transient_as_unavailable("firestore"):
            return [decode(snap.to_dict()) for snap in query.stream()]

    def change(
        self, user_id: str, reminder_id: str, change: Callable[[Reminder], Reminder]
    ) -> Reminder | None:
        ref = self._ref(user_id, reminder_id)

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> Reminder | None:
            snap = ref.get(transaction=transaction)
            if not snap.exists:
                return None
            current = decode(snap.to_dict())
            changed = change(current)
            if changed != current:
                transaction.set(ref, reminder_data(changed, queued=False))
            return changed

        with firestore_errors():
            changed: Reminder | None = run_transaction(self._client, run)
        return changed

    def fire(
        self, user_id: str, reminder_id: str, ring: Ring
    ) -> tuple[Reminder, Notification] | None:
        ref, erasure = self._ref(user_id, reminder_id), erasure_ref(self._client, user_id)
        inbox = self._client.collection("users").document(doc_id(user_id))

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> tuple[Reminder, Notification] | None:
            found = self._client.get_all([ref, erasure], transaction=transaction)
            snaps = {snap.reference.path: snap for snap in found}
            snap, mark = snaps[ref.path], snaps[erasure.path]
            if not snap.exists:
                return None
            current = decode(snap.to_dict())
            if blocks(mark.to_dict() if mark.exists else None, current.created_at):
                return None  # the account is being erased: nothing rings into it
            rung = ring(current)
            if rung is None:
                return None
            reminder, notification = rung
            transaction.set(ref, reminder_data(reminder, queued=False))
            note_ref = inbox.collection(NOTIFICATIONS).document(doc_id(notification.id))
            transaction.set(note_ref, notification_data(notification))
            return rung

        with firestore_errors():
            rung: tuple[Reminder, Notification] | None = run_transaction(self._client, run)
        return rung

    def mark_queued(self, user_id: str, reminder_id: str, version: int) -> None:
        ref = self._ref(user_id, reminder_id)

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> None:
            snap = ref.get(transaction=transaction)
            if snap.exists and (snap.get("version") or 1) == version:
                transaction.update(ref, {UNQUEUED_DUE: firestore.DELETE_FIELD})

        with firestore_errors():
            run_transaction(self._client, run)

    def unqueued(self, before: datetime, limit: int) -> list[DueReminder]:
        query = (
            self._client.collection_group(REMINDERS)
            .where(filter=FieldFilter(UNQUEUED_DUE, "<", before))
            .order_by(UNQUEUED_DUE)
            .limit(limit)
        )
        with transient_as_unavailable("firestore"):
            snaps = list(query.stream())
        return [
            DueReminder(snap.reference.parent.parent.id, decode(snap.to_dict())) for snap in snaps
        ]
