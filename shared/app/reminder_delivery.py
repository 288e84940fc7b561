"""Reminders ring: the delivery task's handler and the scheduled sweep (both on the resume
function: ``/reminders/deliver`` and ``/reminders/sweep``, OIDC of the tasks invoker).

``deliver`` is idempotent by the reminder's version: one transaction moves that version from
pending to fired (or, recurring, on to its next occurrence as a new version) and writes the
inbox notification in the same commit; a redelivered, outdated (edited, snoozed, cancelled)
or done reminder's task finds nothing to ring. The pushes follow (``Notifier``: one delivery
sends them). A recurring reminder's next version gets its task.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import flask

from shared.auth import InternalCaller
from shared.deps import Deps
from shared.errors import BadRequest, InvalidEvent, PayloadTooLarge
from shared.models.notifications import Notification
from shared.services.notify.events import (
    NotifyTask,
    WaitingOn,
    enqueue_quietly,
    notify_task,
    notify_url,
)
from shared.services.notify.notifier import Delivered, Notifier
from shared.services.reminders import changes
from shared.services.reminders.schedule import (
    HORIZON,
    DeliveryTask,
    deliver_url,
    schedule,
    sweep_url,
)
from shared.web import json_response, parse_json, read_body

log = logging.getLogger("reminders")
SWEEP_BATCH = 500


@dataclass(frozen=True)
class Outcome:
    status: str  # "fired", "nothing_to_ring", "pushed_again"
    notification_id: str = ""
    pushed: int = 0

    def as_body(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "notification_id": self.notification_id,
            "pushed": self.pushed,
        }


def notifier(deps: Deps) -> Notifier:
    return Notifier(deps.notifications, deps.push_channels, deps.clock)


def deliver(deps: Deps, task: DeliveryTask) -> Outcome:
    now = deps.clock.now()
    rung = deps.reminders.fire(
        task.user_id, task.reminder_id, lambda current: changes.ring(current, task.version, now)
    )
    if rung is None:
        return _push_again(deps, task)
    reminder, notification = rung
    schedule(deps.settings, deps.tasks, deps.reminders, task.user_id, reminder, now)
    delivered = notifier(deps).push(task.user_id, notification)
    hold(deps, task.user_id, notification, delivered)
    log.info("reminder rang", extra={"id": notification.id, "pushed": delivered.pushed})
    return Outcome("fired", notification.id, delivered.pushed)


def _push_again(deps: Deps, task: DeliveryTask) -> Outcome:
    """A redelivery of a version that rang: its pushes, if the first delivery died before
    sending them (else nothing: the claim is settled)."""
    current = deps.reminders.get(task.user_id, task.reminder_id)
    if current is None:
        return Outcome("nothing_to_ring")
    rang = current.model_copy(update={"version": task.version})
    found = deps.notifications.get(task.user_id, changes.notification_id(rang))
    if found is None:
        return Outcome("nothing_to_ring")
    delivered = notifier(deps).push(task.user_id, found)
    return Outcome(
        "pushed_again" if delivered.pushed else "nothing_to_ring", found.id, delivered.pushed
    )


def sweep(deps: Deps) -> dict[str, int]:
    """Give a task to every pending reminder that comes within the horizon and has none
    (further ahead when set, or its task's creation failed)."""
    now = deps.clock.now()
    queued = 0
    for due in deps.reminders.unqueued(now + HORIZON, SWEEP_BATCH):
        settings, tasks, store = deps.settings, deps.tasks, deps.reminders
        queued += schedule(settings, tasks, store, due.user_id, due.reminder, now)
    return {"queued": queued}


def tell(deps: Deps, task: NotifyTask) -> dict[str, Any]:
    """An event's notification (``events``): the inbox, then the pushes; nothing once the
    question it is about was answered."""
    waiting = task.while_waiting
    if waiting is not None:
        chat = deps.conversations.get_chat(task.user_id, waiting.chat_id)
        control = chat.control if chat is not None else None
        asked = control.interrupt if control is not None else None
        if (
            control is None
            or asked is None
            or asked.id != waiting.interrupt_id
            or not (control.waiting(deps.clock.now()))
        ):
            return {"status": "answered_before"}
    delivered = notifier(deps).notify(task.user_id, task.notification)
    hold(deps, task.user_id, task.notification, delivered, task.while_waiting)
    return {"status": "told", "new": delivered.new, "pushed": delivered.pushed}


def hold(
    deps: Deps,
    user_id: str,
    notification: Notification,
    delivered: Delivered,
    waiting: WaitingOn | None = None,
) -> None:
    """Quiet hours held the pushes back: they are sent when the quiet hours end (a task
    named from the notification, so a redelivery schedules it once)."""
    if delivered.until is None:
        return
    later = NotifyTask(user_id=user_id, notification=notification, while_waiting=waiting)
    task = notify_task(deps.settings, later, delivered.until)
    enqueue_quietly(deps.tasks, [task.model_copy(update={"name": f"held-{task.name}"})])


INTERNAL = {
    "/reminders/deliver": (deliver_url, DeliveryTask),
    "/reminders/sweep": (sweep_url, None),
    "/notifications/deliver": (notify_url, NotifyTask),
}


def serve_internal(deps: Deps, request: flask.Request, path: str) -> flask.Response:
    """``INTERNAL``'s paths: Cloud Tasks' deliveries and Cloud Scheduler's sweep, with the
    tasks invoker's OIDC token. A delivery that can never succeed answers 2xx (the queue
    stops); a transient failure raises (503: the queue retries)."""
    url_of, model = INTERNAL[path]
    caller = InternalCaller(url_of(deps.settings), deps.settings.tasks_invoker_email)
    deps.internal_tokens.verify(request.headers.get("Authorization"), caller)
    if model is None:
        return json_response(sweep(deps))
    try:
        task = parse_json(read_body(request, deps.settings.max_body_bytes), model)
    except (BadRequest, PayloadTooLarge) as error:
        log.error("rejected task", extra={"path": path, "error": error.message})
        return json_response(InvalidEvent(error.message).to_body())
    if isinstance(task, NotifyTask):
        return json_response(tell(deps, task))
    assert isinstance(task, DeliveryTask)
    return json_response(deliver(deps, task).as_body())
