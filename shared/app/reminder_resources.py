"""The user's reminders (``/v1/reminders...``): create, list (open or done), get, patch,
cancel (``DELETE``), ``:snooze`` and ``:complete``. Each change is one transaction over the
reminder, then the new version gets its delivery task (``shared.services.reminders``).
Another user's reminder is simply not found."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from typing import Literal

import flask
from pydantic import BaseModel, ConfigDict, Field

from shared.app.api_call import ApiCall, Position, cut_page, page_start
from shared.errors import NotFound
from shared.models.agent_data import Reminder
from shared.models.notify_api import (
    EmptyBody,
    NewReminder,
    ReminderPage,
    ReminderPatch,
    ReminderResource,
    SnoozeBody,
)
from shared.rest import etags
from shared.rest.paging import PageQuery, scope_of
from shared.services.reminders import changes
from shared.services.reminders.schedule import schedule
from shared.web import json_response

REMINDERS_PAGE = (50, 200)  # default and maximum page size
REMINDER_ID = r"^[A-Za-z0-9_-]{1,64}$"


class ReminderQuery(PageQuery):
    filter: Literal["open", "done"] = "open"


class CreateQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")
    request_id: str = Field(default="", pattern=r"^[A-Za-z0-9_.:-]{0,128}$")


def reminder_resource(reminder: Reminder) -> ReminderResource:
    return ReminderResource(
        id=reminder.id,
        text=reminder.text,
        due_at=reminder.due_at,
        time_zone=reminder.time_zone,
        recurrence=reminder.recurrence,
        state=reminder.state,
        urgent=reminder.urgent,
        etag=changes.etag(reminder),
        created_at=reminder.created_at,
        updated_at=reminder.updated_at or reminder.created_at,
        completed_at=reminder.completed_at,
    )


def answer(reminder: Reminder, status: int = 200) -> flask.Response:
    resource = reminder_resource(reminder)
    response = json_response(resource.model_dump(mode="json", exclude_none=True), status=status)
    response.headers["ETag"] = etags.header(resource.etag)
    return response


def create(call: ApiCall) -> flask.Response:
    """``request_id`` makes it idempotent: the id derives from the user and it."""
    request_id = call.query(CreateQuery).request_id
    body = call.body(NewReminder)
    seed = request_id or uuid.uuid4().hex
    reminder_id = hashlib.sha256(f"{call.user_id}\0{seed}".encode()).hexdigest()[:32]
    return answer(call.deps.reminder_book.add(call.user_id, reminder_id, body))


def list_reminders(call: ApiCall) -> flask.Response:
    page = call.query(ReminderQuery)
    scope, size = scope_of("reminders", filter=page.filter), page.size(*REMINDERS_PAGE)
    start = page_start(call, scope, page)
    store = call.deps.reminders
    if page.filter == "done":
        found = store.list_done(call.user_id, size + 1, start)
    else:
        found = store.list_open(call.user_id, size + 1, start)
    done = page.filter == "done"

    def position(r: Reminder) -> Position:
        return ((r.completed_at if done else r.due_at) or r.created_at, r.id)

    shown, token = cut_page(call, scope, size, found, position)
    body = ReminderPage(reminders=[reminder_resource(r) for r in shown], next_page_token=token)
    return json_response(body.model_dump(mode="json", exclude_none=True))  # completed_at: if done


def read(call: ApiCall) -> flask.Response:
    call.no_query()
    found = call.deps.reminders.get(call.user_id, _reminder_id(call))
    if found is None or found.state == "cancelled":
        raise NotFound("no such reminder")
    return answer(found)


def patch(call: ApiCall) -> flask.Response:
    call.no_query()
    body = call.body(ReminderPatch)
    expected = etags.wanted(call.request.headers.get("If-Match"), body.etag)
    now = call.deps.clock.now()

    def change(current: Reminder) -> Reminder:
        etags.check(expected, changes.etag(current))
        return changes.patched(current, body, now)

    return answer(_change(call, change))


def cancel(call: ApiCall) -> flask.Response:
    call.no_query()
    expected = etags.wanted(call.request.headers.get("If-Match"))
    now = call.deps.clock.now()

    def change(current: Reminder) -> Reminder:
        etags.check(expected, changes.etag(current))
        return changes.cancelled(current, now)

    _change(call, change)
    return flask.Response(status=204)


def snooze(call: ApiCall) -> flask.Response:
    call.no_query()
    body = call.body(SnoozeBody)
    now = call.deps.clock.now()
    return answer(_change(call, lambda current: changes.snoozed(current, body.snooze, now)))


def complete(call: ApiCall) -> flask.Response:
    call.no_query()
    call.body(EmptyBody)
    now = call.deps.clock.now()
    return answer(_change(call, lambda current: changes.completed(current, now)))


def _change(call: ApiCall, change: Callable[[Reminder], Reminder]) -> Reminder:
    reminder_id = _reminder_id(call)

    def guarded(current: Reminder) -> Reminder:
        if current.state == "cancelled":
            raise NotFound("no such reminder")
        return change(current)

    changed = call.deps.reminders.change(call.user_id, reminder_id, guarded)
    if changed is None:
        raise NotFound("no such reminder")
    _schedule(call, changed)
    return changed


def _schedule(call: ApiCall, reminder: Reminder) -> None:
    deps = call.deps
    now = deps.clock.now()
    schedule(deps.settings, deps.tasks, deps.reminders, call.user_id, reminder, now)


def _reminder_id(call: ApiCall) -> str:
    return call.id("reminder", REMINDER_ID)
