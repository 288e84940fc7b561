"""The user's notification inbox (``/v1/notifications...``): list (newest first, or the
unread ones), ``:markRead``, ``:markAllRead``, ``DELETE``, ``:clear``. What writes it is the
notification service (``shared.services.notify``); another user's notification is not found."""

from __future__ import annotations

from typing import Literal

import flask

from shared.app.api_call import ApiCall, cut_page, page_start
from shared.errors import NotFound
from shared.models.notifications import NOTIFICATION_ID_PATTERN, Notification
from shared.models.notify_api import EmptyBody, NotificationPage, NotificationResource
from shared.rest.paging import PageQuery, scope_of
from shared.web import json_response

NOTIFICATIONS_PAGE = (50, 200)


class NotificationQuery(PageQuery):
    filter: Literal["", "unread"] = ""


def notification_resource(notification: Notification) -> NotificationResource:
    return NotificationResource.model_validate(notification.model_dump())


def list_notifications(call: ApiCall) -> flask.Response:
    page = call.query(NotificationQuery)
    unread = page.filter == "unread"
    scope, size = scope_of("notifications", filter=page.filter), page.size(*NOTIFICATIONS_PAGE)
    start = page_start(call, scope, page)
    found = call.deps.notifications.list_inbox(call.user_id, size + 1, start, unread_only=unread)
    shown, token = cut_page(call, scope, size, found, lambda n: (n.created_at, n.id))
    body = NotificationPage(
        notifications=[notification_resource(n) for n in shown], next_page_token=token
    )
    return json_response(body.model_dump(mode="json", exclude_none=True))  # target: set keys


def mark_read(call: ApiCall) -> flask.Response:
    call.no_query()
    call.body(EmptyBody)
    found = call.deps.notifications.mark_read(call.user_id, _notification_id(call))
    if found is None:
        raise NotFound("no such notification")
    return json_response(notification_resource(found).model_dump(mode="json", exclude_none=True))


def mark_all_read(call: ApiCall) -> flask.Response:
    call.no_query()
    call.body(EmptyBody)
    call.deps.notifications.mark_all_read(call.user_id)
    return json_response({})


def delete(call: ApiCall) -> flask.Response:
    call.no_query()
    if not call.deps.notifications.delete(call.user_id, _notification_id(call)):
        raise NotFound("no such notification")
    return flask.Response(status=204)


def clear(call: ApiCall) -> flask.Response:
    call.no_query()
    call.body(EmptyBody)
    call.deps.notifications.clear(call.user_id)
    return json_response({})


def _notification_id(call: ApiCall) -> str:
    return call.id("notification", NOTIFICATION_ID_PATTERN)
