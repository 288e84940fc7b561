"""HTTP entry point that continues a human-in-the-loop interrupt."""

from __future__ import annotations

import flask
import functions_framework

from shared.deps import get_deps
from shared.logs import set_trace
from shared.models.wire import ResumeRequest
from shared.services.resume import ResumeService
from shared.web import guarded, json_response, parse_json, read_body, require_post


@functions_framework.http
def resume(request: flask.Request) -> flask.Response:
    def work() -> flask.Response:
        set_trace(request.headers.get("X-Cloud-Trace-Context"))
        require_post(request)
        deps = get_deps()
        user_id = deps.user_tokens.user_id(request.headers.get("Authorization"))
        body = parse_json(read_body(request, deps.settings.max_body_bytes), ResumeRequest)
        response = ResumeService(deps).run(user_id, body)
        return json_response(response.model_dump(mode="json"))

    return guarded(work)
