"""What notifies besides a reminder, as Cloud Tasks to the resume function's
``/notifications/deliver`` (the reminders queue): an approval waiting, and again shortly
before its timeout; a job done or failed; an escalation to the user.

Each task is named from its notification's stable id, so a retried turn or redelivered job
schedules it once. An approval's two tasks carry the interrupt: the handler sends nothing
once it was answered (``while_waiting``).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from urllib.parse import urljoin

from shared.config import Settings
from shared.errors import DependencyUnavailable
from shared.models.base import Strict
from shared.models.notifications import Notification, NotificationKind, NotificationTarget
from shared.models.wire import Interrupt
from shared.ports import QueuedTask, TaskQueue

log = logging.getLogger("notify")
EXPIRY_LEAD = timedelta(minutes=5)  # "about to expire" this long before the timeout
TITLES: dict[NotificationKind, str] = {
    "approval_waiting": "Your approval is needed",
    "approval_expiring": "An approval is about to expire",
    "job_done": "A task is done",
    "job_failed": "A task could not be finished",
    "escalation": "A task needs you",
    "email_failed": "An email was not sent",
}


class WaitingOn(Strict):
    chat_id: str
    interrupt_id: str


class NotifyTask(Strict):
    user_id: str
    notification: Notification
    while_waiting: WaitingOn | None = None  # sent only while this question waits


def notify_url(settings: Settings) -> str:
    return urljoin(settings.resume_url, "notifications/deliver")


def stable_id(*parts: str) -> str:
    return "n" + hashlib.sha256("\0".join(parts).encode()).hexdigest()[:40]


def notify_task(settings: Settings, task: NotifyTask, at: datetime | None = None) -> QueuedTask:
    return QueuedTask(
        queue=settings.reminder_queue,
        url=notify_url(settings),
        name=f"notify-{task.notification.id}",
        body=task.model_dump_json().encode(),
        schedule_time=at,
    )


def _note(kind: NotificationKind, ident: str, body: str, now: datetime,
          target: NotificationTarget) -> Notification:  # fmt: skip
    return Notification(id=stable_id(kind, ident), kind=kind, title=TITLES[kind],
                        body=body[:1000], created_at=now, target=target)  # fmt: skip


def question_tasks(
    settings: Settings,
    user_id: str,
    chat_id: str,
    interrupt: Interrupt,
    now: datetime,
    timeout_at: datetime | None,
    escalation: bool = False,
) -> list[QueuedTask]:
    """A question waiting on the user: told now, and (with a timeout) again before it."""
    target = NotificationTarget(chat_id=chat_id, question_id=interrupt.id)
    waiting = WaitingOn(chat_id=chat_id, interrupt_id=interrupt.id)
    kind: NotificationKind = "escalation" if escalation else "approval_waiting"
    note = _note(kind, interrupt.id, interrupt.question, now, target)
    first = NotifyTask(user_id=user_id, while_waiting=waiting, notification=note)
    tasks = [notify_task(settings, first)]
    if timeout_at is not None and timeout_at - EXPIRY_LEAD > now:
        at = timeout_at - EXPIRY_LEAD
        soon = _note("approval_expiring", interrupt.id, interrupt.question, at, target)
        later = NotifyTask(user_id=user_id, while_waiting=waiting, notification=soon)
        tasks.append(notify_task(settings, later, at))
    return tasks


def job_task(
    settings: Settings, user_id: str, chat_id: str, job_id: str, done: bool, goal: str,
    now: datetime,
) -> QueuedTask:  # fmt: skip
    kind: NotificationKind = "job_done" if done else "job_failed"
    target = NotificationTarget(chat_id=chat_id, job_id=job_id)
    task = NotifyTask(user_id=user_id, notification=_note(kind, job_id, goal, now, target))
    return notify_task(settings, task)


def enqueue_quietly(tasks: TaskQueue, queued: Sequence[QueuedTask]) -> None:
    """A notification must not fail the work it tells of: a queue outage costs the
    notification (logged), never the job."""
    for task in queued:
        try:
            tasks.enqueue(task)
        except DependencyUnavailable:
            log.warning("notification not queued", extra={"task": task.name})
