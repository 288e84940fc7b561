"""Cloud Tasks target: background fact extraction for one turn; and, at ``/expire``, Cloud
Scheduler's expiry job (same invoker account and audience).

Status codes steer Cloud Tasks: 2xx for done, duplicate, or a task that can never succeed
(an invalid payload, rows the schema refuses, a model that breaks its schema twice, declines
to answer, or refuses the request as built), each
recorded in the log; 503 for transient failures, which Cloud Tasks retries with backoff.
"""

from __future__ import annotations

import logging

import flask
import functions_framework

from shared.app.expiry import expire_facts
from shared.app.extraction import ExtractionService
from shared.auth import InternalCaller
from shared.deps import get_deps
from shared.errors import (
    BadRequest,
    DataRejected,
    InvalidEvent,
    ModelDeclined,
    ModelOutputInvalid,
    ModelRequestRefused,
    PayloadTooLarge,
)
from shared.logs import set_trace
from shared.models.domain import ExtractionTask
from shared.web import guarded, json_response, parse_json, read_body, require_post

log = logging.getLogger("extraction")


@functions_framework.http
def extraction(request: flask.Request) -> flask.Response:
    def work() -> flask.Response:
        set_trace(request.headers.get("X-Cloud-Trace-Context"))
        require_post(request)
        deps = get_deps()
        caller = InternalCaller(deps.settings.extraction_url, deps.settings.tasks_invoker_email)
        deps.internal_tokens.verify(request.headers.get("Authorization"), caller)
        if request.path.rstrip("/") == "/expire":
            return json_response(expire_facts(deps, deps.clock.now()).as_body())
        header_name = request.headers.get("X-CloudTasks-TaskName", "")
        try:
            task = parse_json(read_body(request, deps.settings.max_body_bytes), ExtractionTask)
        except (BadRequest, PayloadTooLarge) as error:  # permanent: record it, stop retries
            log.error("rejected extraction task", extra={"task": header_name, "error": str(error)})
            return json_response(InvalidEvent(str(error)).to_body(), status=200)
        task_key = header_name or None  # else named from the turn, as the turn named it
        try:
            outcome = ExtractionService(deps).run(task, task_key)
        except (DataRejected, ModelOutputInvalid, ModelDeclined, ModelRequestRefused) as error:
            # no retry can help
            log.error("extraction failed", extra={"task": header_name, "code": error.code})
            return json_response({"status": "failed", **error.to_body()}, status=200)
        return json_response(outcome.as_body())

    return guarded(work)
