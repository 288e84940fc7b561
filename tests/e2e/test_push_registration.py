"""Push registration over HTTP through the one origin (``/v1/pushConfig``, ``/v1/devices``)
and the notification settings singleton: what a browser needs, what is refused (and not
stored), and a device registered twice is one device."""

from __future__ import annotations

import base64
import os
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from tests.e2e.conftest import Served, new_user, refused

pytestmark = [pytest.mark.e2e, pytest.mark.stack]
NOT_A_POINT = {"p256dh": "A" * 87, "auth": "A" * 22}  # the right sizes, zeros: no P-256 point


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def subscription(endpoint: str) -> dict[str, Any]:
    """What PushSubscription.toJSON() gives a page: the browser's own keys."""
    key = ec.generate_private_key(ec.SECP256R1())
    point = key.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
    return {"endpoint": endpoint, "keys": {"p256dh": b64(point), "auth": b64(os.urandom(16))}}


def test_push_config_is_a_vapid_public_key(served: Served) -> None:
    answer = served.api("GET", "/v1/pushConfig", new_user())
    assert answer.status_code == 200, answer.text
    key = base64.urlsafe_b64decode(answer.json()["web_push_public_key"] + "==")
    ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), key)  # a P-256 point
    assert len(key) == 65 and key[0] == 4


def test_a_browser_registers_once_lists_and_removes(served: Served) -> None:
    user, other = new_user(), new_user()
    body = {"kind": "web_push", "web_push": subscription("https://fcm.googleapis.com/fcm/send/x1")}
    first = served.api("POST", "/v1/devices", user, body)
    assert first.status_code == 200, first.text
    assert served.api("POST", "/v1/devices", user, body).json() == first.json()
    listed = served.api("GET", "/v1/devices", user).json()
    assert [d["id"] for d in listed["devices"]] == [first.json()["id"]]
    assert set(listed["devices"][0]) == {"id", "kind", "created_at"}  # no endpoint, no keys
    path = f"/v1/devices/{first.json()['id']}"
    assert refused(served.api("DELETE", path, other)) == (404, "not_found")
    assert served.api("DELETE", path, user).status_code == 204
    assert served.api("GET", "/v1/devices", user).json()["devices"] == []


@pytest.mark.parametrize(
    "body",
    [
        {"kind": "web_push", "web_push": subscription("http://fcm.googleapis.com/fcm/send/x")},
        {"kind": "web_push", "web_push": subscription("https://evil.example.com/push")},
        {"kind": "web_push", "web_push": subscription("https://169.254.169.254/latest")},
        {
            "kind": "web_push",
            "web_push": {
                **subscription("https://fcm.googleapis.com/a"),
                "keys": NOT_A_POINT,
            },
        },
    ],
)
def test_bad_subscriptions_are_refused_and_nothing_is_stored(
    served: Served, body: dict[str, Any]
) -> None:
    user = new_user()
    assert refused(served.api("POST", "/v1/devices", user, body)) == (400, "invalid_device")
    assert served.api("GET", "/v1/devices", user).json()["devices"] == []


def test_notification_settings_round_trip(served: Served) -> None:
    user = new_user()
    first = served.api("GET", "/v1/settings/notifications", user)
    assert first.status_code == 200, first.text
    assert first.json()["kinds"]["reminder_due"] is True and first.json()["quiet_hours"] is None
    change = {"kinds": {"job_done": False}, "quiet_hours": {"start": "22:00", "end": "07:00"},
              "time_zone": "Europe/Zurich"}  # fmt: skip
    patched = served.api("PATCH", "/v1/settings/notifications", user, change,
                         headers={"If-Match": first.json()["etag"]})  # fmt: skip
    assert patched.status_code == 200, patched.text
    assert patched.json()["kinds"]["job_done"] is False
    assert patched.json()["kinds"]["reminder_due"] is True
    stale = served.api("PATCH", "/v1/settings/notifications", user, {"quiet_hours": None},
                       headers={"If-Match": first.json()["etag"]})  # fmt: skip
    assert refused(stale) == (412, "stale_etag")
    bad = served.api("PATCH", "/v1/settings/notifications", user, {"time_zone": "Nowhere/X"})
    assert refused(bad) == (400, "unknown_time_zone")
    assert served.api("GET", "/v1/settings/notifications", user).json() == patched.json()
