"""Every bad request gets its status and machine-readable code, and changes no stored data."""

from __future__ import annotations

import json
import time
import uuid

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from google.cloud import firestore

from scripts.stacklib.tokens import mint_user_token
from tests.e2e.conftest import STATE, Served

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


def resigned(token: str, **changes: object) -> str:
    """The stack's real user key signing altered claims (wrong audience, issuer...)."""
    claims = {**jwt.decode(token, options={"verify_signature": False}), **changes}
    jwks = json.loads((STATE / "auth" / "user_jwks.json").read_text())
    key = (STATE / "auth" / "user_key.pem").read_bytes()
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": jwks["keys"][0]["kid"]})


def forged_token(user: str) -> str:
    """Right claims, wrong signing key."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = int(time.time())
    claims = {
        "iss": "https://securetoken.google.com/local-project",
        "aud": "local-project",
        "sub": user,
        "iat": now,
        "exp": now + 600,
    }
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": "forged"})


def raw(served: Served, user: str, chat: str, content: bytes) -> httpx.Response:
    headers = {"Authorization": f"Bearer {served.token(user)}", "Content-Type": "application/json"}
    url = f"{served.origin_url}/v1/chats/{chat}/messages"
    return httpx.post(url, content=content, headers=headers, timeout=30)


CASES = {
    "malformed json": (b'{"message": "hi",', 400, "invalid_json"),
    "not an object": (b'["hi"]', 400, "invalid_json"),
    "missing message": (b'{"client_message_id": "x1"}', 400, "invalid_request"),
    "missing client id": (b'{"message": "hi"}', 400, "invalid_request"),
    "unknown field": (
        b'{"message": "hi", "client_message_id": "x", "user_id": "bob"}',
        400,
        "invalid_request",
    ),
    "a number for a boolean": (
        b'{"message": "hi", "client_message_id": "x", "stream": 1}',
        400,
        "invalid_request",
    ),
    "a number for a string": (
        b'{"message": 42, "client_message_id": "x"}',
        400,
        "invalid_request",
    ),
    "bad client id": (b'{"message": "hi", "client_message_id": "../../x"}', 400, "invalid_request"),
    "empty message": (b'{"message": "", "client_message_id": "x2"}', 400, "invalid_request"),
    "message too long": (
        b'{"message": "' + b"a" * 8001 + b'", "client_message_id": "x3"}',
        400,
        "message_too_long",
    ),
    "body too large": (
        b'{"message": "hi", "client_message_id": "x4", "pad": "' + b"a" * 70000 + b'"}',
        413,
        "payload_too_large",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_requests(served: Served, victim: tuple[str, str], case: str) -> None:
    body, status, code = CASES[case]
    response = raw(served, victim[0], victim[1], body)
    assert (response.status_code, response.json()["error"]["code"]) == (status, code)


@pytest.mark.parametrize(
    "auth",
    [
        "none",
        "not bearer",
        "garbage",
        "forged",
        "expired",
        "wrong audience",
        "wrong issuer",
        "bad user id",
    ],
)
def test_unauthenticated_requests(served: Served, victim: tuple[str, str], auth: str) -> None:
    user, chat = victim
    header = {
        "none": None,
        "not bearer": f"Basic {served.token(user)}",
        "garbage": "Bearer not.a.jwt",
        "forged": f"Bearer {forged_token(user)}",
        "expired": f"Bearer {mint_user_token(STATE, user, ttl=-120)}",
        "wrong audience": f"Bearer {resigned(served.token(user), aud='another-project')}",
        "wrong issuer": f"Bearer {resigned(served.token(user), iss='https://evil.example')}",
        "bad user id": f"Bearer {resigned(served.token(user), sub='../other')}",
    }[auth]
    headers = {"Authorization": header} if header else {}
    calls = (
        ("POST", f"/v1/chats/{chat}/messages", {"message": "hi", "client_message_id": "y"}),
        ("POST", f"/v1/chats/{chat}/questions/i:answer", {"answer": "a"}),
        ("GET", f"/v1/chats/{chat}/messages", None),
        ("PATCH", f"/v1/chats/{chat}", {"title": "x"}),
        ("GET", "/v1/jobs", None),
    )
    for method, path, body in calls:
        response = httpx.request(
            method, served.origin_url + path, json=body, headers=headers, timeout=30
        )
        assert response.status_code == 401, response.text
        assert response.json()["error"]["code"] == "unauthenticated"


@pytest.mark.parametrize("method", ["PUT", "DELETE", "TRACE"])
def test_a_method_a_resource_lacks_is_405_with_allow(
    served: Served, victim: tuple[str, str], method: str
) -> None:
    user, chat = victim
    token = {"Authorization": f"Bearer {served.token(user)}"}
    for base, path, allow in (
        (served.turn_url, f"v1/chats/{chat}/messages", {"GET", "POST"}),
        (served.resume_url, f"v1/chats/{chat}", {"GET", "PATCH"}),
        (served.resume_url, "v1/jobs", {"GET"}),
        (served.resume_url, "v1/jobs/j1:cancel", {"POST"}),
    ):
        response = httpx.request(method, base + path, headers=token, timeout=30)
        assert response.status_code == 405, (method, path)
        assert response.json()["error"]["code"] == "method_not_allowed"
        assert set(response.headers["Allow"].split(", ")) == allow


def test_rate_limit_per_user(served: Served, victim: tuple[str, str], db: firestore.Client) -> None:
    user, chat = victim
    codes = []
    for n in range(25):
        response = served.say(
            user,
            {"message": "x" * 8001, "chat_id": chat, "client_message_id": f"rl{n}"},
        )
        codes.append(response.json()["error"]["code"])
    assert "rate_limited" in codes
    limited = served.say(user, {"message": "Hello", "chat_id": chat, "client_message_id": "rl-ok"})
    assert limited.status_code == 429
    other = f"u{uuid.uuid4().hex[:12]}"
    assert served.say(other, {"message": "Hello", "client_message_id": "rl"}).status_code == 200
