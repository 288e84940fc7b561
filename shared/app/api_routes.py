"""The ``/v1`` routes of the turn and resume functions (``shared.rest.origin`` says which
paths each serves), and how one request reaches its handler: the path picks the route (404,
or 405 with ``Allow``), the bearer token names the user, the handler does the work."""

from __future__ import annotations

from collections.abc import Callable

import flask
from pydantic import BaseModel

from shared.app import (
    chat_resources,
    device_resources,
    job_resources,
    notification_resources,
    reminder_resources,
)
from shared.app.api_call import ApiCall
from shared.app.resume import ResumeService
from shared.app.turn import TurnService
from shared.app.turn_stream import reply
from shared.deps import Deps
from shared.models.chat_api import Answer, ChatResource, NewMessage
from shared.models.wire import CHAT_ID_PATTERN, CLIENT_ID_PATTERN, ResumeRequest, TurnRequest
from shared.rest import etags
from shared.rest.routes import Route, Router
from shared.web import json_response

Handler = Callable[[ApiCall], flask.Response]


def as_json(work: Callable[[ApiCall], BaseModel]) -> Handler:
    return lambda call: json_response(work(call).model_dump(mode="json"))


def with_etag(work: Callable[[ApiCall], ChatResource]) -> Handler:
    def handle(call: ApiCall) -> flask.Response:
        chat = work(call)
        response = json_response(chat.model_dump(mode="json"))
        response.headers["ETag"] = etags.header(chat.etag)
        return response

    return handle


def send_message(call: ApiCall) -> flask.Response:
    """A turn: the message's ``client_message_id`` is its request id (a retry replays)."""
    body = call.body(NewMessage)
    request = TurnRequest(
        chat_id=call.id("chat", CHAT_ID_PATTERN), **body.model_dump(exclude={"stream"})
    )
    service = TurnService(call.deps)
    prepared = service.prepare(call.user_id, request, trace=call.trace)
    return reply(call.request, service, prepared, stream=body.stream)


def answer_question(call: ApiCall) -> flask.Response:
    """Continue the chat's waiting question, streamed like a turn."""
    body = call.body(Answer)
    request = ResumeRequest(
        chat_id=call.id("chat", CHAT_ID_PATTERN),
        interrupt_id=call.id("question", CLIENT_ID_PATTERN),
        answer=body.answer,
    )
    service = ResumeService(call.deps)
    prepared = service.prepare(call.user_id, request, trace=call.trace)
    return reply(call.request, service.turns, prepared, stream=body.stream)


TURN_ROUTES = Router(
    [
        Route("POST", "/v1/chats/{chat}/messages", send_message),
        Route("GET", "/v1/chats/{chat}/messages", as_json(chat_resources.list_messages)),
    ]
)

REMINDER_ROUTES = [
    Route("POST", "/v1/reminders", reminder_resources.create),
    Route("GET", "/v1/reminders", reminder_resources.list_reminders),
    Route("GET", "/v1/reminders/{reminder}", reminder_resources.read),
    Route("PATCH", "/v1/reminders/{reminder}", reminder_resources.patch),
    Route("DELETE", "/v1/reminders/{reminder}", reminder_resources.cancel),
    Route("POST", "/v1/reminders/{reminder}:snooze", reminder_resources.snooze),
    Route("POST", "/v1/reminders/{reminder}:complete", reminder_resources.complete),
]
NOTIFICATION_ROUTES = [
    Route("GET", "/v1/notifications", notification_resources.list_notifications),
    Route("POST", "/v1/notifications:markAllRead", notification_resources.mark_all_read),
    Route("POST", "/v1/notifications:clear", notification_resources.clear),
    Route("POST", "/v1/notifications/{notification}:markRead", notification_resources.mark_read),
    Route("DELETE", "/v1/notifications/{notification}", notification_resources.delete),
    Route("GET", "/v1/pushConfig", device_resources.push_config),
    Route("POST", "/v1/devices", device_resources.register),
    Route("GET", "/v1/devices", device_resources.list_devices),
    Route("DELETE", "/v1/devices/{device}", device_resources.remove),
]

RESUME_ROUTES = Router(
    [
        Route("POST", "/v1/chats", with_etag(chat_resources.create)),
        Route("GET", "/v1/chats", as_json(chat_resources.list_chats)),
        Route("GET", "/v1/chats/{chat}", with_etag(chat_resources.read)),
        Route("PATCH", "/v1/chats/{chat}", with_etag(chat_resources.rename)),
        Route("POST", "/v1/chats/{chat}/questions/{question}:answer", answer_question),
        Route("GET", "/v1/jobs", as_json(job_resources.list_jobs)),
        Route("GET", "/v1/jobs/{job}", as_json(job_resources.read)),
        *(
            Route("POST", f"/v1/jobs/{{job}}:{verb}", as_json(work))
            for verb, work in job_resources.VERBS.items()
        ),
        *REMINDER_ROUTES,
        *NOTIFICATION_ROUTES,
    ]
)


def serve(router: Router, deps: Deps, request: flask.Request, trace: str | None) -> flask.Response:
    matched = router.match(request.method, request.path)
    user_id = deps.user_tokens.user_id(request.headers.get("Authorization"))
    call = ApiCall(deps, user_id, request, matched.params, trace)
    handler: Handler = matched.route.handler
    return handler(call)
