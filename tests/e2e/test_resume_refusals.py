"""The resume function's operations besides answering (the chat's poll, the job requests,
the approval timeout): every bad request gets its status and code and changes nothing."""

from __future__ import annotations

import httpx
import pytest

from shared.app.handoff_drain import drain_url
from shared.config import Settings
from shared.services.hitl_timeouts import timeout_url
from tests.e2e.conftest import Served
from tests.e2e.test_background_work import internal_headers

pytestmark = [pytest.mark.e2e, pytest.mark.stack]

PATHS = ("messages", "jobs/pause", "jobs/resume", "jobs/cancel", "jobs/takeover")
BAD = {
    "malformed json": (b'{"chat_id": ', 400, "invalid_json"),
    "not an object": (b'["c1"]', 400, "invalid_json"),
    "empty object": (b"{}", 400, "invalid_request"),
    "unknown field": (b'{"ID": "c1", "user_id": "bob"}', 400, "invalid_request"),
    "id naming another path": (b'{"ID": "../x"}', 400, "invalid_request"),
    "a number for an id": (b'{"ID": 7}', 400, "invalid_request"),
    "body too large": (b'{"pad": "' + b"a" * 70000 + b'"}', 413, "payload_too_large"),
}  # fmt: skip


def post(served: Served, path: str, user: str | None, content: bytes) -> httpx.Response:
    headers = {"Content-Type": "application/json"}
    if user:
        headers["Authorization"] = f"Bearer {served.token(user)}"
    return httpx.post(served.resume_url + path, content=content, headers=headers, timeout=30)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_requests(served: Served, victim: tuple[str, str], path: str, case: str) -> None:
    body, status, code = BAD[case]
    key = b"chat_id" if path == "messages" else b"job_id"  # the one field each operation takes
    response = post(served, path, victim[0], body.replace(b"ID", key))
    assert (response.status_code, response.json()["error"]["code"]) == (status, code)


@pytest.mark.parametrize("path", PATHS)
def test_no_or_a_foreign_user(served: Served, victim: tuple[str, str], path: str) -> None:
    user, chat = victim
    body = f'{{"chat_id": "{chat}"}}' if path == "messages" else f'{{"job_id": "{chat}-job0"}}'
    anonymous = post(served, path, None, body.encode())
    assert (anonymous.status_code, anonymous.json()["error"]["code"]) == (401, "unauthenticated")
    foreign = post(served, path, f"{user}x", body.encode())  # another user: not found
    assert (foreign.status_code, foreign.json()["error"]["code"]) == (404, "not_found")


def test_an_unknown_operation_and_other_methods(served: Served, victim: tuple[str, str]) -> None:
    unknown = post(served, "jobs/delete", victim[0], b'{"job_id": "j1"}')
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "not_found")
    for path in PATHS:
        response = httpx.get(served.resume_url + path, timeout=30)
        assert (response.status_code, response.headers["Allow"]) == (405, "POST")


def test_a_repeated_poll_changes_nothing(served: Served, victim: tuple[str, str]) -> None:
    user, chat = victim
    first = post(served, "messages", user, f'{{"chat_id": "{chat}"}}'.encode())
    again = post(served, "messages", user, f'{{"chat_id": "{chat}"}}'.encode())
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
