"""HTTP entry point of the memory function: the user's ``/v1`` memory resources (facts,
persons, pending items, settings, strategies, the account; docs/api.md)."""

from __future__ import annotations

import flask
import functions_framework

from shared.app.settings.api import SettingsApi
from shared.app.settings.routes import handle
from shared.deps import get_deps
from shared.logs import set_trace
from shared.web import guarded


@functions_framework.http
def memory(request: flask.Request) -> flask.Response:
    def work() -> flask.Response:
        set_trace(request.headers.get("X-Cloud-Trace-Context"))
        deps = get_deps()
        user_id = deps.user_tokens.user_id(request.headers.get("Authorization"))
        return handle(request, SettingsApi(deps), user_id, deps.settings.max_body_bytes)

    return guarded(work)
