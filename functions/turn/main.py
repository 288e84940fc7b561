"""HTTP entry point of a chat's messages (``/v1/chats/{chat}/messages``): ``POST`` runs a
turn (JSON, or Server-Sent Events when streaming), ``GET`` lists them."""

from __future__ import annotations

import flask
import functions_framework

from shared.app.api_routes import TURN_ROUTES, serve
from shared.app.warmup import start_instance
from shared.deps import get_deps
from shared.logs import set_trace
from shared.web import guarded, trace_header

# Before the instance listens (functions-framework imports first), and in the worker gunicorn
# forks before it accepts: no user pays for it.
start_instance(get_deps())


@functions_framework.http
def turn(request: flask.Request) -> flask.Response:
    def work() -> flask.Response:
        trace = trace_header(request)
        set_trace(trace)
        return serve(TURN_ROUTES, get_deps(), request, trace)

    return guarded(work)
