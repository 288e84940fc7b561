"""The delivery task that rings a reminder.

A pending reminder due within Cloud Tasks' horizon gets one task on the reminders queue at
its ``due_at``, named from a hash of the user, the reminder and its version: creating it
twice is refused by the queue (harmless), and any change of when or whether it rings bumps
the version, so the old task finds a newer version and does nothing. A reminder further
ahead, or one whose task could not be created (the queue down), keeps ``unqueued_due_at``:
the scheduled sweep gives it its task once it comes within the horizon.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import datetime, timedelta
from urllib.parse import urljoin

from shared.config import Settings
from shared.errors import DependencyUnavailable
from shared.models.agent_data import Reminder
from shared.models.base import Strict
from shared.ports import QueuedTask, ReminderStore, TaskQueue

log = logging.getLogger("reminders")
# Cloud Tasks takes a schedule_time at most 30 days ahead; a day's margin for the sweep.
HORIZON = timedelta(days=29)


class DeliveryTask(Strict):
    user_id: str
    reminder_id: str
    version: int


def deliver_url(settings: Settings) -> str:
    return urljoin(settings.resume_url, "reminders/deliver")


def sweep_url(settings: Settings) -> str:
    return urljoin(settings.resume_url, "reminders/sweep")


def task_name(user_id: str, reminder_id: str, version: int) -> str:
    digest = hashlib.sha256(f"{user_id}\0{reminder_id}\0{version}".encode()).hexdigest()
    return f"reminder-{digest[:48]}"


def delivery_task(settings: Settings, user_id: str, reminder: Reminder) -> QueuedTask:
    body = DeliveryTask(user_id=user_id, reminder_id=reminder.id, version=reminder.version)
    return QueuedTask(
        queue=settings.reminder_queue,
        url=deliver_url(settings),
        name=task_name(user_id, reminder.id, reminder.version),
        body=body.model_dump_json().encode(),
        schedule_time=reminder.due_at,
    )


def schedule(
    settings: Settings,
    tasks: TaskQueue,
    store: ReminderStore,
    user_id: str,
    reminder: Reminder,
    now: datetime,
) -> bool:
    """Give the reminder's version its task if it is pending and within the horizon;
    whether a task holds it now. A queue outage is left to the sweep."""
    if reminder.state != "pending" or reminder.due_at - now > HORIZON:
        return False
    try:
        tasks.enqueue(delivery_task(settings, user_id, reminder))  # False: made before
    except DependencyUnavailable:
        log.warning("reminder task not created; the sweep will", extra={"id": reminder.id})
        return False
    store.mark_queued(user_id, reminder.id, reminder.version)
    return True
