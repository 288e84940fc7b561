"""HTTP entry point of the settings UI's memory operations (one POST path per operation)."""

from __future__ import annotations

import flask
import functions_framework

from shared.app.settings.api import SettingsApi, operation_for
from shared.deps import get_deps
from shared.logs import set_trace
from shared.web import guarded, json_response, parse_json, read_body, require_post


@functions_framework.http
def memory(request: flask.Request) -> flask.Response:
    def work() -> flask.Response:
        set_trace(request.headers.get("X-Cloud-Trace-Context"))
        require_post(request)
        deps = get_deps()
        user_id = deps.user_tokens.user_id(request.headers.get("Authorization"))
        operation = operation_for(request.path)
        raw = read_body(request, deps.settings.max_body_bytes) or b"{}"
        body = parse_json(raw, operation.request)
        result = operation.run(SettingsApi(deps), user_id, body)
        return json_response(result.model_dump(mode="json"))

    return guarded(work)
