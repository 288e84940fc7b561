"""HTTP entry point of the memory function: the user's ``/v1`` memory resources (facts,
persons, pending items, settings, strategies, the account, the calendar feed; docs/api.md),
and the feed's public URL, which calendar apps read with no other credential."""

from __future__ import annotations

import flask
import functions_framework

from shared.app.settings.api import SettingsApi
from shared.app.settings.calendar_feed import feed_token, read_feed
from shared.app.settings.routes import handle
from shared.deps import get_deps
from shared.logs import set_trace
from shared.web import calendar_response, guarded


@functions_framework.http
def memory(request: flask.Request) -> flask.Response:
    def work() -> flask.Response:
        set_trace(request.headers.get("X-Cloud-Trace-Context"))
        deps = get_deps()
        token = feed_token(request.path)
        if token is not None:  # a calendar app: the URL's secret token is its credential
            return calendar_response(request, read_feed(deps, token))
        user_id = deps.user_tokens.user_id(request.headers.get("Authorization"))
        return handle(request, SettingsApi(deps), user_id, deps.settings.max_body_bytes)

    return guarded(work)
