"""HTTP entry point of one conversation turn (JSON, or Server-Sent Events when streaming)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import flask
import functions_framework

from shared.deps import get_deps
from shared.errors import AppError
from shared.logs import set_trace
from shared.models.wire import TurnRequest
from shared.services.turn import Chunk, PreparedTurn, TurnService
from shared.web import (
    guarded,
    json_response,
    parse_json,
    read_body,
    require_post,
    sse,
    sse_response,
    wants_stream,
)


def _stream(service: TurnService, turn: PreparedTurn) -> Iterator[str]:
    try:
        for event in service.events(turn):
            if isinstance(event, Chunk):
                yield sse("chunk", {"text": event.text})
            else:
                name = "interrupt" if event.response.interrupt else "done"
                yield sse(name, event.response.model_dump(mode="json"))
    except AppError as error:  # the status line is sent already: report in-band
        yield sse("error", error.to_body()["error"])
    except Exception:
        logging.getLogger("turn").exception("turn failed while streaming")
        yield sse("error", AppError("internal error").to_body()["error"])


@functions_framework.http
def turn(request: flask.Request) -> flask.Response:
    def work() -> flask.Response:
        trace = request.headers.get("X-Cloud-Trace-Context") or request.headers.get("traceparent")
        set_trace(trace)
        require_post(request)
        deps = get_deps()
        user_id = deps.user_tokens.user_id(request.headers.get("Authorization"))
        body = parse_json(read_body(request, deps.settings.max_body_bytes), TurnRequest)
        service = TurnService(deps)
        prepared = service.prepare(user_id, body, trace=trace)
        if wants_stream(request, body.stream):
            return sse_response(_stream(service, prepared))
        return json_response(service.run_prepared(prepared).model_dump(mode="json"))

    return guarded(work)
