"""``PushChannel`` for browsers: Web Push (RFC 8030) with the payload encrypted for the
subscription (RFC 8291, aes128gcm) and signed with the server's VAPID key (RFC 8292), by
pywebpush.

A subscription's endpoint is a URL the browser's push service gave it, so it is where we
send requests: only https, and only to the push services' hosts (``allowed_hosts``), so a
forged subscription cannot point our requests at anything else.
"""

from __future__ import annotations

import base64
import binascii
import json
from urllib.parse import urlsplit

import requests
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from py_vapid import Vapid
from pywebpush import WebPusher

from shared.errors import DependencyUnavailable, InvalidDevice
from shared.models.notifications import Device, Notification, push_payload
from shared.ports import PushOutcome

TTL_SECONDS = 24 * 3600  # a reminder a day late is still worth showing
GONE = (404, 410)  # the push service forgot the subscription


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def public_key_of(private_pem: bytes) -> str:
    """The VAPID public key as browsers take it: base64url of the uncompressed point."""
    vapid = Vapid.from_pem(private_pem)
    point = vapid.public_key.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
    return base64.urlsafe_b64encode(point).decode().rstrip("=")


class WebPushChannel:
    kind = "web_push"

    def __init__(
        self,
        private_pem: bytes,
        subject: str,
        allowed_hosts: frozenset[str],
        ca_file: str | None = None,
        timeout: float = 10.0,
    ) -> None:
        self._vapid = Vapid.from_pem(private_pem)
        self._subject = subject
        self._allowed = allowed_hosts
        self._session = requests.Session()
        self._session.trust_env = False  # no proxy between us and the push service
        if ca_file:  # dev/test: the local mock push service's own certificate
            self._session.verify = ca_file
        self._timeout = timeout

    def check(self, device: Device) -> None:
        sub = device.web_push
        if sub is None:
            raise InvalidDevice("web_push: no subscription")
        url = urlsplit(sub.endpoint)
        if url.scheme != "https":
            raise InvalidDevice("web_push.endpoint: must be https")
        if url.netloc.lower() not in self._allowed and not any(
            url.hostname and url.hostname.endswith("." + h) for h in self._allowed
        ):
            raise InvalidDevice("web_push.endpoint: not a known push service")
        try:
            ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), _unb64(sub.keys.p256dh))
            secret = _unb64(sub.keys.auth)
        except (ValueError, binascii.Error) as exc:
            raise InvalidDevice("web_push.keys: p256dh is not a P-256 point") from exc
        if len(secret) != 16:
            raise InvalidDevice("web_push.keys: auth is not 16 bytes")

    def send(self, device: Device, notification: Notification) -> PushOutcome:
        sub = device.web_push
        if sub is None:
            return "failed"
        url = urlsplit(sub.endpoint)
        claims = {"sub": self._subject, "aud": f"{url.scheme}://{url.netloc}"}
        headers = dict(self._vapid.sign(claims))
        headers["Urgency"] = "high" if notification.urgent else "normal"
        data = json.dumps(push_payload(notification))
        pusher = WebPusher(sub.model_dump(), requests_session=self._session)
        try:
            response = pusher.send(
                data, headers, ttl=TTL_SECONDS, content_encoding="aes128gcm", timeout=self._timeout
            )
        except requests.RequestException as exc:
            raise DependencyUnavailable(f"web push: {type(exc).__name__}") from exc
        status = int(getattr(response, "status_code", 0))
        if status in GONE:
            return "gone"
        if status == 429 or status >= 500:
            raise DependencyUnavailable(f"web push: {status}")
        return "sent" if 200 <= status < 300 else "failed"
