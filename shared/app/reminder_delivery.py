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
from shared.services.notify.notifier import Notifier
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


def serve_internal(deps: Deps, request: flask.Request, path: str) -> flask.Response:
    """``/reminders/deliver`` (Cloud Tasks) and ``/reminders/sweep`` (Cloud Scheduler), both
    with the tasks invoker's OIDC token. A delivery that can never succeed answers 2xx (the
    queue stops); a transient failure raises (503: the queue retries)."""
    url = deliver_url(deps.settings) if path.endswith("deliver") else sweep_url(deps.settings)
    deps.internal_tokens.verify(
        request.headers.get("Authorization"), InternalCaller(url, deps.settings.tasks_invoker_email)
    )
    if path.endswith("sweep"):
        return json_response(sweep(deps))
    try:
        task = parse_json(read_body(request, deps.settings.max_body_bytes), DeliveryTask)
    except (BadRequest, PayloadTooLarge) as error:
        log.error("rejected reminder task", extra={"error": error.message})
        return json_response(InvalidEvent(error.message).to_body())
    return json_response(deliver(deps, task).as_body())
