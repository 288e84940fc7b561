"""What each act does to a reminder (pure: the store applies them in its transaction).

Every act that changes when or whether it rings bumps ``version`` (the delivery task of the
old version then finds a newer one and does nothing). A recurring reminder that rings moves
on to its next occurrence (a new version, state pending); a one-off one becomes ``fired``
(open until the user marks it done; a snooze makes it pending again).
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from shared.errors import ReminderNotOpen
from shared.models.agent_data import Reminder
from shared.models.base import digest_of
from shared.models.notifications import Notification, NotificationTarget
from shared.models.notify_api import NewReminder, ReminderPatch
from shared.services.reminders.timing import (
    check_due,
    check_recurrence,
    next_occurrence,
    snoozed_until,
    zone,
)

TITLE = "Reminder"


def etag(reminder: Reminder) -> str:
    """Of what the user may change, and whether it is still open."""
    r = reminder
    return digest_of(r.text, r.due_at.isoformat(), r.time_zone, r.recurrence, r.state, r.urgent)


def created(reminder_id: str, new: NewReminder, now: datetime) -> Reminder:
    zone(new.time_zone)
    due = check_due(new.due_at, now)
    rule = check_recurrence(new.recurrence, due, new.time_zone)
    return Reminder(
        id=reminder_id,
        text=new.text,
        due_at=due,
        time_zone=new.time_zone,
        recurrence=rule,
        urgent=new.urgent,
        created_at=now,
        updated_at=now,
        anchor_at=due if rule else None,
    )


def patched(current: Reminder, patch: ReminderPatch, now: datetime) -> Reminder:
    if not current.open:
        raise ReminderNotOpen(f"the reminder is {current.state}")
    time_zone = patch.time_zone if patch.time_zone is not None else current.time_zone
    zone(time_zone)
    retimed = patch.due_at is not None and patch.due_at != current.due_at
    due = check_due(patch.due_at, now) if patch.due_at is not None and retimed else current.due_at
    rule_text = patch.recurrence if patch.recurrence is not None else current.recurrence
    rule = check_recurrence(rule_text, due, time_zone)
    rescheduled = retimed or rule != current.recurrence or time_zone != current.time_zone
    anchor = (due if rescheduled else current.anchor_at or due) if rule else None
    if rescheduled and due <= now:  # a fired one retimed by zone or rule only
        check_due(due, now)
    return current.model_copy(
        update={
            "text": patch.text if patch.text is not None else current.text,
            "due_at": due,
            "time_zone": time_zone,
            "recurrence": rule,
            "urgent": patch.urgent if patch.urgent is not None else current.urgent,
            "state": "pending" if rescheduled else current.state,
            "anchor_at": anchor,
            "version": current.version + 1,
            "updated_at": now,
        }
    )


def snoozed(current: Reminder, snooze: str, now: datetime) -> Reminder:
    if not current.open:
        raise ReminderNotOpen(f"the reminder is {current.state}")
    return current.model_copy(
        update={
            "due_at": snoozed_until(snooze, now, current.time_zone),
            "state": "pending",
            "version": current.version + 1,
            "updated_at": now,
        }
    )


def completed(current: Reminder, now: datetime) -> Reminder:
    if current.state == "done":
        return current  # a repeat keeps the first completion
    if current.state == "cancelled":
        raise ReminderNotOpen("the reminder is cancelled")
    update = {"state": "done", "completed_at": now, "updated_at": now}
    return current.model_copy(update={**update, "version": current.version + 1})


def cancelled(current: Reminder, now: datetime) -> Reminder:
    if current.state in ("cancelled", "done"):
        return current
    update = {"state": "cancelled", "updated_at": now, "version": current.version + 1}
    return current.model_copy(update=update)


def notification_id(reminder: Reminder) -> str:
    """Stable per ringing: the same version rings once, whatever delivers it."""
    text = f"reminder\0{reminder.id}\0{reminder.version}"
    return "r" + hashlib.sha256(text.encode()).hexdigest()[:40]


def ring(current: Reminder, version: int, now: datetime) -> tuple[Reminder, Notification] | None:
    """The delivery of ``version``: it rings only that version of a pending reminder."""
    if current.version != version or current.state != "pending":
        return None
    notification = Notification(
        id=notification_id(current),
        kind="reminder_due",
        title=TITLE,
        body=current.text,
        urgent=current.urgent,
        created_at=now,
        target=NotificationTarget(reminder_id=current.id),
    )
    after = max(current.due_at, now)
    following = next_occurrence(current, after)
    update: dict[str, object] = {"fired_at": now, "updated_at": now}
    if following is None:
        update["state"] = "fired"
    else:
        update.update(due_at=following, version=current.version + 1)
    return current.model_copy(update=update), notification
