"""Approvals wait a limited time: a Cloud Task scheduled for the deadline auto-rejects.

The task is named from the interrupt (Cloud Tasks refuses a second task of that name, so a
retried turn schedules nothing new) and delivered to ``functions/resume``'s ``/timeout``
path with the queue's OIDC token. There it claims the interrupt exactly like a user's answer
(``resume.<interrupt id>``): whichever comes first wins, the other finds nothing pending.
"""

from __future__ import annotations

from datetime import datetime
from urllib.parse import urljoin

from shared.config import Settings
from shared.models.base import Strict
from shared.ports import QueuedTask, TaskQueue


class TimeoutTask(Strict):
    user_id: str
    chat_id: str
    interrupt_id: str


def timeout_url(settings: Settings) -> str:
    return urljoin(settings.resume_url, "timeout")


def schedule(
    settings: Settings,
    tasks: TaskQueue,
    task: TimeoutTask,
    at: datetime,
    trace: str | None = None,
) -> bool:
    """False if the timeout was scheduled already (the same interrupt)."""
    return tasks.enqueue(timeout_task(settings, task, at, trace))


def timeout_task(
    settings: Settings, task: TimeoutTask, at: datetime, trace: str | None = None
) -> QueuedTask:
    return QueuedTask(
        queue=settings.hitl_timeout_queue,
        url=timeout_url(settings),
        name=f"hitl-timeout-{task.interrupt_id}"[:500],
        body=task.model_dump_json().encode(),
        schedule_time=at,
        headers={"X-Cloud-Trace-Context": trace} if trace else {},
    )
