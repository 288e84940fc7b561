"""HTTP entry point of the resume function: chats, their questions, and agent jobs.

``/v1/chats...`` and ``/v1/jobs...`` (``shared.app.api_routes``): the user's chats (create,
list, get, rename), answers to a chat's question (JSON, or Server-Sent Events), and the
user's agent jobs (list, get, pause, resume, cancel, take over).
``/timeout``: Cloud Tasks delivers an approval's deadline (OIDC of the tasks invoker); the
interrupt is rejected unless it was answered. 2xx either way, so the queue stops.
``/reminders/deliver``: Cloud Tasks rings a reminder at its time; ``/reminders/sweep``:
Cloud Scheduler gives the reminders entering the 30-day horizon their tasks
(``shared.app.reminder_delivery``; OIDC of the tasks invoker); ``/notifications/deliver``:
an approval waiting or expiring, a job done or failed, an escalation (Cloud Tasks).
``/outbox/drain``: Cloud Scheduler (OIDC of the tasks invoker) sends the handoffs that
turns kept while a queue was down.
"""

from __future__ import annotations

import logging

import flask
import functions_framework

from shared.app import reminder_delivery
from shared.app.api_routes import RESUME_ROUTES, serve
from shared.app.handoff_drain import drain_due, drain_url
from shared.app.resume import ResumeService
from shared.auth import InternalCaller
from shared.deps import Deps, get_deps
from shared.errors import BadRequest, InvalidEvent, PayloadTooLarge
from shared.logs import set_trace
from shared.services.hitl_timeouts import TimeoutTask, timeout_url
from shared.web import guarded, json_response, parse_json, read_body, require_post, trace_header

log = logging.getLogger("resume")


@functions_framework.http
def resume(request: flask.Request) -> flask.Response:
    def work() -> flask.Response:
        trace = trace_header(request)
        set_trace(trace)
        path = request.path.rstrip("/") or "/"
        deps = get_deps()
        if path == "/timeout":
            require_post(request)
            return _time_out(deps, request, trace)
        if path in reminder_delivery.INTERNAL:
            require_post(request)
            return reminder_delivery.serve_internal(deps, request, path)
        if path == "/outbox/drain":
            require_post(request)
            caller = InternalCaller(drain_url(deps.settings), deps.settings.tasks_invoker_email)
            deps.internal_tokens.verify(request.headers.get("Authorization"), caller)
            return json_response(drain_due(deps).as_body())
        return serve(RESUME_ROUTES, deps, request, trace)

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
