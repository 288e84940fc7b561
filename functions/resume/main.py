"""HTTP entry point of the resume function: the conversation's continuations.

``/`` (or ``/resume``): the user answers a waiting interrupt (JSON, or Server-Sent Events).
``/messages``: a poll of one chat (new messages, the question it waits on); ``/chats``: the
user's chats.
``/jobs/pause|resume|cancel|takeover``: the user's control over a running agent job.
``/timeout``: Cloud Tasks delivers an approval's deadline (OIDC of the tasks invoker); the
interrupt is rejected unless it was answered. 2xx either way, so the queue stops.
``/outbox/drain``: Cloud Scheduler (OIDC of the tasks invoker) sends the handoffs that
turns kept while a queue was down.
"""

from __future__ import annotations

import logging

import flask
import functions_framework

from shared.app.handoff_drain import drain_due, drain_url
from shared.app.resume import ResumeService
from shared.app.resume_operations import json_operation
from shared.app.turn_stream import reply
from shared.auth import InternalCaller
from shared.deps import Deps, get_deps
from shared.errors import BadRequest, InvalidEvent, PayloadTooLarge
from shared.logs import set_trace
from shared.models.wire import ResumeRequest
from shared.services.hitl_timeouts import TimeoutTask, timeout_url
from shared.web import guarded, json_response, parse_json, read_body, require_post, trace_header

log = logging.getLogger("resume")


@functions_framework.http
def resume(request: flask.Request) -> flask.Response:
    def work() -> flask.Response:
        trace = trace_header(request)
        set_trace(trace)
        require_post(request)
        path = request.path.rstrip("/") or "/"
        deps = get_deps()
        if path == "/timeout":
            return _time_out(deps, request, trace)
        if path == "/outbox/drain":
            caller = InternalCaller(drain_url(deps.settings), deps.settings.tasks_invoker_email)
            deps.internal_tokens.verify(request.headers.get("Authorization"), caller)
            return json_response(drain_due(deps).as_body())
        user_id = deps.user_tokens.user_id(request.headers.get("Authorization"))
        body = read_body(request, deps.settings.max_body_bytes)
        if path in ("/", "/resume"):  # the function's root, as docs/openapi.yaml names it
            service = ResumeService(deps)
            prepared = service.prepare(user_id, parse_json(body, ResumeRequest), trace=trace)
            return reply(request, service.turns, prepared)
        answer = json_operation(deps, user_id, path, body)
        return json_response(answer.model_dump(mode="json"))

    return guarded(work)


def _time_out(deps: Deps, request: flask.Request, trace: str | None) -> flask.Response:
    caller = InternalCaller(timeout_url(deps.settings), deps.settings.tasks_invoker_email)
    deps.internal_tokens.verify(request.headers.get("Authorization"), caller)
    try:
        task = parse_json(read_body(request, deps.settings.max_body_bytes), TimeoutTask)
    except (BadRequest, PayloadTooLarge) as error:  # permanent: record it, stop the retries
        log.error("rejected timeout task", extra={"error": error.message})
        return json_response(InvalidEvent(error.message).to_body())
    service = ResumeService(deps)
    prepared = service.time_out(task.user_id, task.chat_id, task.interrupt_id, trace)
    if prepared is None:
        return json_response({"status": "answered_before"})
    response = service.turns.run_prepared(prepared)
    log.info("approval timed out", extra={"interrupt_id": task.interrupt_id})
    return json_response({"status": "rejected", "turn_id": response.turn_id})
