"""Pub/Sub push target (a CloudEvent): run one agent job, or its continuation.

Returning normally acknowledges the message; a transient error or a job that cannot go on
yet propagates (a non-2xx status) so Pub/Sub redelivers, up to the dead-letter policy's 5
attempts (``shared.app.agent_delivery``).
"""

from __future__ import annotations

import logging

import flask
import functions_framework
from cloudevents.http import CloudEvent

from shared.app.agent_delivery import AgentJobService, job_from_push, trace_of
from shared.auth import InternalCaller
from shared.deps import get_deps
from shared.errors import AppError, InvalidEvent
from shared.logs import set_trace
from shared.web import error_response

log = logging.getLogger("agents")


@functions_framework.errorhandler(AppError)  # type: ignore[untyped-decorator]
def _app_error(error: AppError) -> flask.Response:
    return error_response(error)


@functions_framework.cloud_event
def agents(event: CloudEvent) -> None:
    set_trace(trace_of(event.data))
    deps = get_deps()
    caller = InternalCaller(deps.settings.agents_url, deps.settings.agents_invoker_email)
    deps.internal_tokens.verify(flask.request.headers.get("Authorization"), caller)
    try:
        job, message_id = job_from_push(event.data)
    except InvalidEvent as error:  # can never succeed: acknowledge, keep a record
        log.error("rejected agent job", extra={"event_id": event["id"], "error": error.message})
        return
    outcome = AgentJobService(deps).run(job, message_id)
    log.info("agent job", extra={"job_id": outcome.job_id, "status": outcome.status})
