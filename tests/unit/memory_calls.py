"""Requests to the memory function's ``/v1`` routes on in-memory stores: the same route
table, parsing and error mapping as the deployed function, without a server."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import flask

from shared.app.settings.api import SettingsApi
from shared.app.settings.needs import SettingsPorts
from shared.app.settings.routes import handle
from shared.web import guarded

APP = flask.Flask("memory-tests")
MAX_BODY = 64 * 1024


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def code(self) -> str:
        return str(self.body["error"]["code"])


def call(
    deps: SettingsPorts,
    user: str,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
    **params: Any,
) -> Answer:
    """``params`` become the query string (``filter``, ``page_token``, ``update_mask``...)."""
    url, _, given = path.partition("?")
    query = "&".join(part for part in (given, urlencode(params)) if part)
    with APP.test_request_context(
        url, method=method, query_string=query, json=body, headers=headers or {}
    ):
        response = guarded(lambda: handle(flask.request, SettingsApi(deps), user, MAX_BODY))
    return Answer(response.status_code, json.loads(response.get_data()), dict(response.headers))


def ok(deps: SettingsPorts, user: str, method: str, path: str, body: Any = None, **kw: Any) -> Any:
    answer = call(deps, user, method, path, body, **kw)
    assert answer.status == 200, answer.body
    return answer.body


def refused(
    deps: SettingsPorts, user: str, method: str, path: str, body: Any = None, **kw: Any
) -> tuple[int, str]:
    answer = call(deps, user, method, path, body, **kw)
    assert answer.status >= 400, answer.body
    return answer.status, answer.code
