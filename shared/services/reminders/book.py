"""The user's reminders as the assistant's tools and the API set them: validated
(``changes``), stored, and given their delivery task at once (``schedule``)."""

from __future__ import annotations

from shared.config import Settings
from shared.models.agent_data import Reminder
from shared.models.notify_api import NewReminder
from shared.ports import Clock, ReminderStore, TaskQueue
from shared.services.reminders import changes
from shared.services.reminders.schedule import schedule


class ReminderBook:
    def __init__(
        self, settings: Settings, tasks: TaskQueue, store: ReminderStore, clock: Clock
    ) -> None:
        self._settings = settings
        self._tasks = tasks
        self.store = store
        self._clock = clock

    def add(self, user_id: str, reminder_id: str, new: NewReminder) -> Reminder:
        """Store it (refused with a code when it cannot ring), or answer the one stored
        under ``reminder_id`` (a replay); either way its version has its task."""
        now = self._clock.now()
        stored, _ = self.store.create(user_id, changes.created(reminder_id, new, now))
        self.scheduled(user_id, stored)
        return stored

    def listed(self, user_id: str, limit: int, include_done: bool = False) -> list[Reminder]:
        found = self.store.list_open(user_id, limit)
        if include_done:
            found = sorted(found + self.store.list_done(user_id, limit), key=lambda r: r.due_at)
        return found[:limit]

    def complete(self, user_id: str, reminder_id: str) -> Reminder | None:
        now = self._clock.now()
        return self.store.change(user_id, reminder_id, lambda r: changes.completed(r, now))

    def scheduled(self, user_id: str, reminder: Reminder) -> bool:
        now = self._clock.now()
        return schedule(self._settings, self._tasks, self.store, user_id, reminder, now)
