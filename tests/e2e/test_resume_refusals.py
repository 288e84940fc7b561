"""The resume function's ``/v1`` resources besides answering (chats, jobs) and its internal
endpoints: every bad request gets its status and code and changes nothing."""

from __future__ import annotations

import httpx
import pytest

from shared.app.handoff_drain import drain_url
from shared.config import Settings
from shared.services.hitl_timeouts import timeout_url
from tests.e2e.conftest import Served
from tests.e2e.test_background_work import internal_headers

pytestmark = [pytest.mark.e2e, pytest.mark.stack]

WRITES = (("POST", "/v1/chats"), ("PATCH", "/v1/chats/{chat}"), ("POST", "/v1/jobs/j1:pause"))
BAD = {
    "malformed json": (b'{"title": ', 400, "invalid_json"),
    "not an object": (b'["c1"]', 400, "invalid_json"),
    "unknown field": (b'{"title": "x", "user_id": "bob"}', 400, "invalid_request"),
    "a number for a string": (b'{"title": 7}', 400, "invalid_request"),
    "title too long": (b'{"title": "' + b"a" * 201 + b'"}', 400, "invalid_request"),
    "body too large": (b'{"title": "' + b"a" * 70000 + b'"}', 413, "payload_too_large"),
}
OWN = (  # (method, path) of the user's own resources
    ("GET", "/v1/chats/{chat}"),
    ("PATCH", "/v1/chats/{chat}"),
    ("GET", "/v1/chats/{chat}/messages"),
    ("GET", "/v1/jobs/{chat}-job0"),
    *(("POST", f"/v1/jobs/{{chat}}-job0:{verb}") for verb in ("pause", "resume", "cancel")),
    ("POST", "/v1/jobs/{chat}-job0:takeover"),
)


def call(
    served: Served, method: str, path: str, user: str | None, content: bytes = b""
) -> httpx.Response:
    headers = {"Content-Type": "application/json"}
    if user:
        headers["Authorization"] = f"Bearer {served.token(user)}"
    url = served.origin_url + path
    return httpx.request(method, url, content=content, headers=headers, timeout=30)


@pytest.mark.parametrize(("method", "path"), WRITES)
@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_bodies(
    served: Served, victim: tuple[str, str], method: str, path: str, case: str
) -> None:
    body, status, code = BAD[case]
    user, chat = victim
    if path.endswith(":pause") and case in (
        "unknown field",
        "a number for a string",
        "title too long",
    ):
        body = b'{"title": "x"}'  # a job's custom method takes no field at all
    response = call(served, method, path.format(chat=chat), user, body)
    assert (response.status_code, response.json()["error"]["code"]) == (status, code)


@pytest.mark.parametrize("request_id", ["../other", "", "a" * 129, "x y"])
def test_a_create_with_a_bad_request_id_is_refused(
    served: Served, victim: tuple[str, str], request_id: str
) -> None:
    response = call(served, "POST", f"/v1/chats?request_id={request_id}", victim[0], b"{}")
    assert (response.status_code, response.json()["error"]["code"]) == (400, "invalid_request")


@pytest.mark.parametrize(("method", "path"), OWN)
def test_no_or_a_foreign_user(
    served: Served, victim: tuple[str, str], method: str, path: str
) -> None:
    user, chat = victim
    body = b'{"title": "mine"}' if method == "PATCH" else b""
    anonymous = call(served, method, path.format(chat=chat), None, body)
    assert (anonymous.status_code, anonymous.json()["error"]["code"]) == (401, "unauthenticated")
    foreign = call(served, method, path.format(chat=chat), f"{user}x", body)
    assert (foreign.status_code, foreign.json()["error"]["code"]) == (404, "not_found")


def test_an_unknown_method_or_id_and_other_http_methods(
    served: Served, victim: tuple[str, str]
) -> None:
    user = victim[0]
    for path in ("/v1/jobs/j1:delete", "/v1/jobs/__j1__", "/v1/chats/__c__", "/v1/chats/a.b"):
        response = call(served, "GET" if ":" not in path else "POST", path, user)
        assert (response.status_code, response.json()["error"]["code"]) == (404, "not_found")
    for path in ("/v1/jobs/j1:cancel", "/v1/chats/c1/questions/q1:answer"):
        response = call(served, "GET", path, user)
        assert (response.status_code, response.headers["Allow"]) == (405, "POST")


def test_a_repeated_read_changes_nothing(served: Served, victim: tuple[str, str]) -> None:
    user, chat = victim
    for path in (f"/v1/chats/{chat}", f"/v1/chats/{chat}/messages", "/v1/jobs", "/v1/chats"):
        first, again = call(served, "GET", path, user), call(served, "GET", path, user)
        assert first.status_code == again.status_code == 200
        assert first.json() == again.json()  # and the victim fixture checks nothing was written


def test_a_timeout_signed_for_another_audience_is_refused(
    served: Served, victim: tuple[str, str]
) -> None:
    user, chat = victim
    settings = Settings()
    body = {"user_id": user, "chat_id": chat, "interrupt_id": "i1"}
    for audience in (settings.extraction_url, settings.agents_url):  # valid, but not for us
        headers = internal_headers(audience, settings.tasks_invoker_email)
        refused = httpx.post(served.resume_url + "timeout", json=body, headers=headers, timeout=30)
        assert (refused.status_code, refused.json()["error"]["code"]) == (401, "unauthenticated")
    assert timeout_url(settings).endswith("/timeout")


def test_the_outbox_drain_refuses_anyone_but_its_scheduler(
    served: Served, victim: tuple[str, str]
) -> None:
    user, _ = victim
    settings = Settings()
    url = served.resume_url + "outbox/drain"
    callers = {
        "no token": {},
        "a user's token": {"Authorization": f"Bearer {served.token(user)}"},
        "another audience": internal_headers(settings.extraction_url, settings.tasks_invoker_email),
        "another caller": internal_headers(drain_url(settings), settings.agents_invoker_email),
    }
    for who, headers in callers.items():
        refused = httpx.post(url, json={}, headers=headers, timeout=30)
        assert refused.status_code in (401, 403), who
        assert refused.json()["error"]["code"] in ("unauthenticated", "forbidden"), who
