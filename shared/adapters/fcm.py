"""``PushChannel`` for phones: Firebase Cloud Messaging's HTTP v1 API
(``POST {base}/v1/projects/{project}/messages:send``), a data message whose values are all
strings (``push_payload``, well under FCM's 4 KB), high priority for urgent ones.

Errors follow FCM's: ``UNREGISTERED`` (404), a token FCM calls invalid (400 with the
FcmError ``INVALID_ARGUMENT``) and ``SENDER_ID_MISMATCH`` (403, another project's token) mean
the token will never work: the device is pruned. 429 and 5xx are transient (the caller's
queue retries). A registration is checked with a ``validate_only`` send, so a forged token or
another app's is refused before it is stored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from shared.errors import DependencyUnavailable, InvalidDevice
from shared.models.notifications import Device, Notification, push_payload
from shared.ports import PushOutcome

SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
FCM_ERROR = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
DEAD_TOKEN = {"UNREGISTERED", "SENDER_ID_MISMATCH", "INVALID_ARGUMENT"}
TTL = "86400s"


def fcm_error_code(body: Any) -> str:
    """The FcmError ``errorCode`` of an error response ('' when it has none)."""
    details = body.get("error", {}).get("details", []) if isinstance(body, dict) else []
    for detail in details:
        if isinstance(detail, dict) and detail.get("@type") == FCM_ERROR:
            return str(detail.get("errorCode", ""))
    return ""


class FcmChannel:
    kind = "fcm"

    def __init__(
        self,
        project: str,
        token: Callable[[], str],
        base_url: str = "https://fcm.googleapis.com",
        timeout: float = 10.0,
    ) -> None:
        self._url = f"{base_url.rstrip('/')}/v1/projects/{project}/messages:send"
        self._token = token
        self._http = httpx.Client(timeout=timeout, trust_env=False)

    def check(self, device: Device) -> None:
        if not device.fcm_token:
            raise InvalidDevice("fcm_token: missing")
        probe = {"id": "registration-check"}
        status, code = self._post(device.fcm_token, probe, False, validate_only=True)
        if status == 200:
            return
        if status == 429 or status >= 500:
            raise DependencyUnavailable(f"fcm: {status}")
        raise InvalidDevice(f"fcm_token: refused by FCM ({code or status})")

    def send(self, device: Device, notification: Notification) -> PushOutcome:
        if not device.fcm_token:
            return "failed"
        payload = push_payload(notification)
        status, code = self._post(device.fcm_token, payload, notification.urgent, False)
        if status == 200:
            return "sent"
        if status == 429 or status >= 500:
            raise DependencyUnavailable(f"fcm: {status}")
        return "gone" if code in DEAD_TOKEN else "failed"

    def _post(
        self, token: str, data: dict[str, str], urgent: bool, validate_only: bool
    ) -> tuple[int, str]:
        message = {
            "token": token,
            "data": data,
            "android": {
                "priority": "HIGH" if urgent else "NORMAL",
                "ttl": TTL,
                "collapse_key": data["id"][:64],
            },
            "apns": {"headers": {"apns-priority": "10" if urgent else "5"}},
        }
        headers = {"Authorization": f"Bearer {self._token()}"}
        body = {"validate_only": validate_only, "message": message}
        try:
            response = self._http.post(self._url, json=body, headers=headers)
        except httpx.HTTPError as exc:
            raise DependencyUnavailable(f"fcm: {type(exc).__name__}") from exc
        if response.status_code == 200:
            return 200, ""
        try:
            code = fcm_error_code(response.json())
        except ValueError:
            code = ""
        return response.status_code, code


def google_token() -> Callable[[], str]:
    """A token source of the function's service account for FCM (refreshed when stale)."""
    import google.auth
    from google.auth.transport.requests import Request

    credentials, _ = google.auth.default(scopes=[SCOPE])

    def token() -> str:
        if not credentials.valid:
            credentials.refresh(Request())  # type: ignore[no-untyped-call]
        return str(credentials.token)

    return token
