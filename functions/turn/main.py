"""HTTP entry point of one conversation turn (JSON, or Server-Sent Events when streaming)."""

from __future__ import annotations

import flask
import functions_framework

from shared.app.turn import TurnService
from shared.app.turn_stream import reply
from shared.deps import get_deps
from shared.logs import set_trace
from shared.models.wire import TurnRequest
from shared.web import guarded, parse_json, read_body, require_post, trace_header


@functions_framework.http
def turn(request: flask.Request) -> flask.Response:
    def work() -> flask.Response:
        trace = trace_header(request)
        set_trace(trace)
        require_post(request)
        deps = get_deps()
        user_id = deps.user_tokens.user_id(request.headers.get("Authorization"))
        body = parse_json(read_body(request, deps.settings.max_body_bytes), TurnRequest)
        service = TurnService(deps)
        prepared = service.prepare(user_id, body, trace=trace)
        return reply(request, service, prepared, stream=body.stream)

    return guarded(work)
