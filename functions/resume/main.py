"""HTTP entry point that answers a pending interrupt (JSON, or Server-Sent Events)."""

from __future__ import annotations

import flask
import functions_framework

from shared.deps import get_deps
from shared.logs import set_trace
from shared.models.wire import ResumeRequest
from shared.services.resume import ResumeService
from shared.services.turn_stream import reply
from shared.web import guarded, parse_json, read_body, require_post, trace_header


@functions_framework.http
def resume(request: flask.Request) -> flask.Response:
    def work() -> flask.Response:
        trace = trace_header(request)
        set_trace(trace)
        require_post(request)
        deps = get_deps()
        user_id = deps.user_tokens.user_id(request.headers.get("Authorization"))
        body = parse_json(read_body(request, deps.settings.max_body_bytes), ResumeRequest)
        service = ResumeService(deps)
        prepared = service.prepare(user_id, body, trace=trace)
        return reply(request, service.turns, prepared)

    return guarded(work)
