"""``NotificationStore`` on Firestore: the inbox, the push devices and the preferences.

    users/{uid}/notifications/{id}   a Notification; unread_at (= created_at while unread:
                                     the unread list's order); push_until (a delivery's
                                     claim on the push channels) and pushed_at
    users/{uid}/devices/{id}         a Device (id: a digest of its endpoint or token, so
                                     registering the same one again is the same device)
    users/{uid}/settings/notifications  NotificationSettings

All under the user: account erasure deletes them with the rest of the tree.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.collection import CollectionReference
from google.cloud.firestore_v1.document import DocumentReference

from shared.adapters.doc_ids import doc_id
from shared.adapters.firestore_erasure import fenced
from shared.adapters.firestore_keyset import keyset_query
from shared.adapters.firestore_tx import run_transaction
from shared.adapters.gcp_errors import firestore_errors, transient_as_unavailable
from shared.models.notifications import Device, Notification, NotificationSettings
from shared.ports import Keyset

NOTIFICATIONS, DEVICES, SETTINGS = "notifications", "devices", "settings"
UNREAD, PUSH_UNTIL, PUSHED = "unread_at", "push_until", "pushed_at"
BATCH = 400  # writes per batch (Firestore allows 500)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def notification_data(notification: Notification) -> dict[str, Any]:
    data = notification.model_dump()
    if not notification.read:
        data[UNREAD] = notification.created_at
    return data


def _notification(data: dict[str, Any] | None) -> Notification:
    data = data or {}
    return Notification.model_validate({k: data[k] for k in Notification.model_fields if k in data})


class FirestoreNotificationStore:
    def __init__(self, client: firestore.Client) -> None:
        self._client = client

    def _user(self, user_id: str) -> DocumentReference:
        ref: DocumentReference = self._client.collection("users").document(doc_id(user_id))
        return ref

    def _inbox(self, user_id: str) -> CollectionReference:
        collection: CollectionReference = self._user(user_id).collection(NOTIFICATIONS)
        return collection

    def _devices(self, user_id: str) -> CollectionReference:
        collection: CollectionReference = self._user(user_id).collection(DEVICES)
        return collection

    # -- the inbox ---------------------------------------------------------------------------
    def add(self, user_id: str, notification: Notification) -> bool:
        ref = self._inbox(user_id).document(doc_id(notification.id))
        try:
            with transient_as_unavailable("firestore"):
                ref.create(notification_data(notification))
        except gexc.AlreadyExists:  # the same event delivered again
            return False
        return True

    def get(self, user_id: str, notification_id: str) -> Notification | None:
        with transient_as_unavailable("firestore"):
            snap = self._inbox(user_id).document(doc_id(notification_id)).get()
        return _notification(snap.to_dict()) if snap.exists else None

    def list_inbox(
        self, user_id: str, limit: int, after: Keyset | None = None, unread_only: bool = False
    ) -> list[Notification]:
        field = UNREAD if unread_only else "created_at"
        query = keyset_query(self._inbox(user_id), field, limit, after, descending=True)
        with transient_as_unavailable("firestore"):
            return [_notification(snap.to_dict()) for snap in query.stream()]

    def mark_read(self, user_id: str, notification_id: str) -> Notification | None:
        ref = self._inbox(user_id).document(doc_id(notification_id))

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> Notification | None:
            snap = ref.get(transaction=transaction)
            if not snap.exists:
                return None
            found = _notification(snap.to_dict())
            if not found.read:
                transaction.update(ref, {"read": True, UNREAD: firestore.DELETE_FIELD})
            return found.model_copy(update={"read": True})

        with firestore_errors():
            read: Notification | None = run_transaction(self._client, run)
        return read

    def mark_all_read(self, user_id: str) -> int:
        query = self._inbox(user_id).where(filter=FieldFilter(UNREAD, ">", EPOCH))
        update = {"read": True, UNREAD: firestore.DELETE_FIELD}
        return self._each(query, lambda batch, ref: batch.update(ref, update))

    def delete(self, user_id: str, notification_id: str) -> bool:
        ref = self._inbox(user_id).document(doc_id(notification_id))
        with transient_as_unavailable("firestore"):
            existed = ref.get().exists
            ref.delete()
        return bool(existed)

    def clear(self, user_id: str) -> int:
        return self._each(self._inbox(user_id), lambda batch, ref: batch.delete(ref))

    def _each(self, query: Any, write: Any) -> int:
        count = 0
        with transient_as_unavailable("firestore"):
            while True:
                snaps = list(query.limit(BATCH).stream())
                if not snaps:
                    return count
                batch = self._client.batch()
                for snap in snaps:
                    write(batch, snap.reference)
                batch.commit()
                count += len(snaps)

    def claim_push(self, user_id: str, notification_id: str, now: datetime, lease: float) -> bool:
        """Whether this delivery sends the notification's pushes: none has sent them yet,
        and no other holds the claim (a crashed one's runs out after ``lease`` seconds)."""
        ref = self._inbox(user_id).document(doc_id(notification_id))

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> bool:
            snap = ref.get(transaction=transaction)
            if not snap.exists:
                return False
            data = snap.to_dict() or {}
            held = data.get(PUSH_UNTIL)
            if data.get(PUSHED) is not None or (held is not None and held > now):
                return False
            transaction.update(ref, {PUSH_UNTIL: now + timedelta(seconds=lease)})
            return True

        with firestore_errors():
            claimed: bool = run_transaction(self._client, run)
        return claimed

    def settle_push(self, user_id: str, notification_id: str, now: datetime) -> None:
        ref = self._inbox(user_id).document(doc_id(notification_id))
        with transient_as_unavailable("firestore"):
            ref.update({PUSHED: now})

    def release_push(self, user_id: str, notification_id: str) -> None:
        ref = self._inbox(user_id).document(doc_id(notification_id))
        with transient_as_unavailable("firestore"):
            ref.update({PUSH_UNTIL: firestore.DELETE_FIELD})

    # -- devices -----------------------------------------------------------------------------
    def add_device(self, user_id: str, device: Device) -> Device:
        """Fenced by the erasure mark: no device registers into an account being erased."""
        ref = self._devices(user_id).document(doc_id(device.id))

        def write(transaction: firestore.Transaction) -> Device:
            snap = ref.get(transaction=transaction)
            if snap.exists:  # registered again: keep its first registration
                return Device.model_validate(snap.to_dict())
            transaction.set(ref, device.model_dump())
            return device

        return fenced(self._client, user_id, None, write)

    def list_devices(self, user_id: str, limit: int, after: Keyset | None = None) -> list[Device]:
        query = keyset_query(self._devices(user_id), "created_at", limit, after, descending=False)
        with transient_as_unavailable("firestore"):
            return [Device.model_validate(snap.to_dict()) for snap in query.stream()]

    def remove_device(self, user_id: str, device_id: str) -> bool:
        ref = self._devices(user_id).document(doc_id(device_id))
        with transient_as_unavailable("firestore"):
            existed = ref.get().exists
            ref.delete()
        return bool(existed)

    # -- preferences -------------------------------------------------------------------------
    def get_settings(self, user_id: str) -> NotificationSettings:
        ref = self._user(user_id).collection(SETTINGS).document("notifications")
        with transient_as_unavailable("firestore"):
            snap = ref.get()
        return (
            NotificationSettings.model_validate(snap.to_dict())
            if snap.exists
            else (NotificationSettings())
        )

    def put_settings(self, user_id: str, settings: NotificationSettings) -> None:
        ref = self._user(user_id).collection(SETTINGS).document("notifications")
        with transient_as_unavailable("firestore"):
            ref.set(settings.model_dump())
