"""In-memory ``ReminderStore`` and ``NotificationStore`` with the Firestore adapters'
semantics (tests/contract runs the same tests on both)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TypeVar

from shared.adapters.doc_ids import doc_id
from shared.models.agent_data import Reminder
from shared.models.notifications import Device, Notification, NotificationSettings
from shared.ports import DueReminder, Keyset, Ring

T = TypeVar("T")


def _page(
    items: list[T], key: Callable[[T], Keyset], limit: int, after: Keyset | None, newest: bool
) -> list[T]:
    ordered = sorted(items, key=key, reverse=newest)
    if after is not None:
        ordered = [i for i in ordered if (key(i) < after if newest else key(i) > after)]
    return ordered[:limit]


def _key(user_id: str, reminder_id: str) -> tuple[str, str]:
    """Refuses an id that names another path, as Firestore's document paths do."""
    return doc_id(user_id), doc_id(reminder_id)


class FakeReminderStore:
    def __init__(self, inbox: FakeNotificationStore | None = None) -> None:
        self._reminders: dict[tuple[str, str], Reminder] = {}
        self._queued: set[tuple[str, str, int]] = set()
        self._lock = threading.RLock()
        self.inbox = inbox or FakeNotificationStore()

    def create(self, user_id: str, reminder: Reminder) -> tuple[Reminder, bool]:
        key = _key(user_id, reminder.id)
        with self._lock:
            found = self._reminders.get(key)
            if found is not None:
                return found, False
            self._reminders[key] = reminder
            return reminder, True

    def get(self, user_id: str, reminder_id: str) -> Reminder | None:
        return self._reminders.get(_key(user_id, reminder_id))

    def _of(self, user_id: str) -> list[Reminder]:
        user_id = doc_id(user_id)
        return [r for (user, _), r in self._reminders.items() if user == user_id]

    def list_open(self, user_id: str, limit: int, after: Keyset | None = None) -> list[Reminder]:
        found = [r for r in self._of(user_id) if r.open]
        return _page(found, lambda r: (r.due_at, r.id), limit, after, newest=False)

    def list_done(self, user_id: str, limit: int, after: Keyset | None = None) -> list[Reminder]:
        found = [r for r in self._of(user_id) if r.state == "done"]
        return _page(found, lambda r: (r.completed_at or r.due_at, r.id), limit, after, True)

    def change(
        self, user_id: str, reminder_id: str, change: Callable[[Reminder], Reminder]
    ) -> Reminder | None:
        with self._lock:
            current = self._reminders.get(_key(user_id, reminder_id))
            if current is None:
                return None
            changed = change(current)
            self._reminders[(user_id, reminder_id)] = changed
            return changed

    def fire(
        self, user_id: str, reminder_id: str, ring: Ring
    ) -> tuple[Reminder, Notification] | None:
        with self._lock:
            current = self._reminders.get(_key(user_id, reminder_id))
            rung = ring(current) if current is not None else None
            if rung is None:
                return None
            self._reminders[(user_id, reminder_id)] = rung[0]
            self.inbox.put(user_id, rung[1])
            return rung

    def mark_queued(self, user_id: str, reminder_id: str, version: int) -> None:
        with self._lock:
            self._queued.add((user_id, reminder_id, version))

    def unqueued(self, before: datetime, limit: int) -> list[DueReminder]:
        with self._lock:
            found = [
                DueReminder(user, r)
                for (user, _), r in self._reminders.items()
                if r.state == "pending"
                and r.due_at < before
                and (user, r.id, r.version) not in self._queued
            ]
        return sorted(found, key=lambda d: d.reminder.due_at)[:limit]


class FakeNotificationStore:
    def __init__(self) -> None:
        self._inbox: dict[tuple[str, str], Notification] = {}
        self._claims: dict[tuple[str, str], datetime] = {}
        self._pushed: set[tuple[str, str]] = set()
        self._devices: dict[tuple[str, str], Device] = {}
        self._settings: dict[str, NotificationSettings] = {}
        self._lock = threading.RLock()

    def put(self, user_id: str, notification: Notification) -> None:
        with self._lock:
            self._inbox[(user_id, notification.id)] = notification

    def add(self, user_id: str, notification: Notification) -> bool:
        with self._lock:
            if (user_id, notification.id) in self._inbox:
                return False
            self.put(user_id, notification)
            return True

    def get(self, user_id: str, notification_id: str) -> Notification | None:
        return self._inbox.get((user_id, notification_id))

    def list_inbox(
        self, user_id: str, limit: int, after: Keyset | None = None, unread_only: bool = False
    ) -> list[Notification]:
        found = [n for (u, _), n in self._inbox.items() if u == user_id]
        found = [n for n in found if not (unread_only and n.read)]
        return _page(found, lambda n: (n.created_at, n.id), limit, after, newest=True)

    def mark_read(self, user_id: str, notification_id: str) -> Notification | None:
        with self._lock:
            found = self._inbox.get((user_id, notification_id))
            if found is not None:
                found = found.model_copy(update={"read": True})
                self._inbox[(user_id, notification_id)] = found
            return found

    def mark_all_read(self, user_id: str) -> int:
        unread = [n.id for n in self.list_inbox(user_id, 10**6, unread_only=True)]
        for notification_id in unread:
            self.mark_read(user_id, notification_id)
        return len(unread)

    def delete(self, user_id: str, notification_id: str) -> bool:
        with self._lock:
            return self._inbox.pop((user_id, notification_id), None) is not None

    def clear(self, user_id: str) -> int:
        with self._lock:
            mine = [key for key in self._inbox if key[0] == user_id]
            for key in mine:
                del self._inbox[key]
            return len(mine)

    def claim_push(self, user_id: str, notification_id: str, now: datetime, lease: float) -> bool:
        key = (user_id, notification_id)
        with self._lock:
            held = self._claims.get(key)
            if key not in self._inbox or key in self._pushed or (held and held > now):
                return False
            self._claims[key] = now + timedelta(seconds=lease)
            return True

    def settle_push(self, user_id: str, notification_id: str, now: datetime) -> None:
        with self._lock:
            self._pushed.add((user_id, notification_id))

    def release_push(self, user_id: str, notification_id: str) -> None:
        with self._lock:
            self._claims.pop((user_id, notification_id), None)

    def add_device(self, user_id: str, device: Device) -> Device:
        with self._lock:
            return self._devices.setdefault((user_id, device.id), device)

    def list_devices(self, user_id: str, limit: int, after: Keyset | None = None) -> list[Device]:
        found = [d for (u, _), d in self._devices.items() if u == user_id]
        return _page(found, lambda d: (d.created_at, d.id), limit, after, newest=False)

    def remove_device(self, user_id: str, device_id: str) -> bool:
        with self._lock:
            return self._devices.pop((user_id, device_id), None) is not None

    def get_settings(self, user_id: str) -> NotificationSettings:
        return self._settings.get(user_id, NotificationSettings())

    def put_settings(self, user_id: str, settings: NotificationSettings) -> None:
        self._settings[user_id] = settings
