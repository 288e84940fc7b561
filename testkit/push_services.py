"""Loopback stand-ins for the two push services, strict like the real ones.

``MockPushService`` plays a browser's push service and the browser behind it (RFC 8030): it
serves https with its own certificate, hands out subscriptions (``subscribe``: an endpoint
and the browser's P-256 key and auth secret, as ``PushSubscription.toJSON()``), and takes a
push only when it is what a real one takes: ``Content-Encoding: aes128gcm``, a ``TTL``, a
VAPID ``Authorization: vapid t=<ES256 JWT>, k=<key>`` whose signature verifies with ``k``,
whose ``aud`` is the endpoint's origin and whose ``exp`` is within 24 hours (RFC 8292), and a
body that decrypts with the browser's keys (RFC 8291). It records the decrypted payloads;
a subscription marked gone answers 410, an unknown one 404.

``FakeFcm`` plays FCM HTTP v1's ``projects.messages.send``: a bearer token, exactly one of
token/topic/condition, data values that are strings, no reserved data keys, at most 4096
bytes of data, Android priority and TTL in their formats. A token it never issued answers
400 with the FcmError INVALID_ARGUMENT, one marked unregistered 404 UNREGISTERED (as FCM
documents both: firebase.google.com/docs/cloud-messaging/error-codes); ``validate_only``
checks without delivering.
"""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import json
import re
import ssl
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import http_ece
import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key (the CA file the functions trust locally)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mock push service")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "push-cert.pem", folder / "push-key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@dataclass
class Browser:
    key: ec.EllipticCurvePrivateKey
    auth: bytes
    gone: bool = False
    received: list[dict[str, Any]] = field(default_factory=list)


class _Server:
    """A threading HTTP server on a free loopback port (https with ``tls``)."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], tls: ssl.SSLContext | None) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class MockPushService:
    def __init__(self) -> None:
        self._folder = Path(tempfile.mkdtemp(prefix="mock-push-"))
        self.ca_file, key_file = self_signed(self._folder)
        self.browsers: dict[str, Browser] = {}
        self.refused: list[str] = []  # why each refused request was refused
        self._lock = threading.Lock()
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(self.ca_file, key_file)
        self._server = _Server(_push_handler(self), tls)

    @property
    def origin(self) -> str:
        return f"https://127.0.0.1:{self._server.port}"

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self._server.port}"

    def subscribe(self) -> dict[str, Any]:
        browser_id = uuid.uuid4().hex
        browser = Browser(ec.generate_private_key(ec.SECP256R1()), uuid.uuid4().bytes)
        with self._lock:
            self.browsers[browser_id] = browser
        point = browser.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        keys = {"p256dh": _b64(point), "auth": _b64(browser.auth)}
        return {"endpoint": f"{self.origin}/push/{browser_id}", "keys": keys}

    def received(self, endpoint: str) -> list[dict[str, Any]]:
        return list(self.browsers[endpoint.rsplit("/", 1)[-1]].received)

    def forget(self, endpoint: str) -> None:
        """The browser unsubscribed: its endpoint answers 410 Gone from now on."""
        self.browsers[endpoint.rsplit("/", 1)[-1]].gone = True

    def stop(self) -> None:
        self._server.stop()

    def take(self, path: str, headers: Any, body: bytes) -> int:
        browser = self.browsers.get(path.rsplit("/", 1)[-1]) if path.startswith("/push/") else None
        if browser is None:
            return 404
        if browser.gone:
            return 410
        problem = self._problem(headers)
        if problem:
            self.refused.append(problem)
            return 400 if problem != "vapid" else 403
        try:
            plain = http_ece.decrypt(body, private_key=browser.key, auth_secret=browser.auth,
                                     version="aes128gcm")  # fmt: skip
            payload = json.loads(plain)
        except Exception as exc:  # any failure to decrypt is the sender's
            self.refused.append(f"decrypt: {exc!r}")
            return 400
        with self._lock:
            browser.received.append(payload)
        return 201

    def _problem(self, headers: Any) -> str:
        if headers.get("Content-Encoding") != "aes128gcm":
            return "content-encoding"
        if not re.fullmatch(r"\d+", headers.get("TTL", "")):
            return "ttl"
        found = re.fullmatch(
            r"vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)", headers.get("Authorization", "")
        )
        if not found:
            return "vapid"
        token, key = found.groups()
        try:
            public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), _unb64(key))
            claims = jwt.decode(token, public, algorithms=["ES256"], audience=self.origin)
        except (jwt.PyJWTError, ValueError):
            return "vapid"
        if not 0 < claims["exp"] - time.time() <= 24 * 3600 or not claims.get("sub"):
            return "vapid"
        return ""


def _push_handler(service: MockPushService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            status = service.take(self.path, self.headers, body)
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_: Any) -> None:
            return

    return Handler


RESERVED_DATA = re.compile(r"^(from|gcm|google\..*|message_type|collapse_key)$")


class FakeFcm:
    def __init__(self, project: str, token: str = "fcm-test-token") -> None:
        self.project = project
        self.token = token
        self.issued: set[str] = set()
        self.unregistered: set[str] = set()
        self.sent: list[dict[str, Any]] = []  # messages delivered (not validate_only)
        self.requests = 0
        self._lock = threading.Lock()
        self._server = _Server(_fcm_handler(self), None)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.port}"

    def register(self) -> str:
        """A registration token as a phone's FCM SDK would get it."""
        token = f"{uuid.uuid4().hex[:22]}:APA91b{_b64(uuid.uuid4().bytes * 8)}"
        self.issued.add(token)
        return token

    def stop(self) -> None:
        self._server.stop()

    def answer(self, path: str, auth: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests += 1
        body, refusal = self._parsed(path, auth, raw)
        if refusal is not None:
            return refusal
        message = body["message"]
        token = message["token"]
        if token in self.unregistered:
            return 404, _error(404, "NOT_FOUND", "Requested entity was not found.", "UNREGISTERED")
        if token not in self.issued:
            reason = "The registration token is not a valid FCM registration token"
            return 400, _error(400, "INVALID_ARGUMENT", reason, "INVALID_ARGUMENT")
        if not body.get("validate_only"):
            with self._lock:
                self.sent.append(message)
        return 200, {"name": f"projects/{self.project}/messages/{uuid.uuid4().int % 10**16}"}

    def _parsed(
        self, path: str, auth: str, raw: bytes
    ) -> tuple[dict[str, Any], tuple[int, dict[str, Any]] | None]:
        if path != f"/v1/projects/{self.project}/messages:send":
            return {}, (404, _error(404, "NOT_FOUND", "no such method"))
        if auth != f"Bearer {self.token}":
            return {}, (401, _error(401, "UNAUTHENTICATED", "invalid credentials"))
        try:
            body = json.loads(raw)
            problem = _shape_problem(body, body["message"])
        except (ValueError, KeyError, TypeError):
            problem = "Invalid JSON payload"
        if problem:
            return {}, (400, _error(400, "INVALID_ARGUMENT", problem))
        return body, None


def _shape_problem(body: dict[str, Any], message: Any) -> str:
    """What FCM would refuse in the message's shape ("" when nothing)."""
    if set(body) - {"message", "validate_only"} or not isinstance(message, dict):
        return "Invalid JSON payload received. Unknown name"
    data = message.get("data", {})
    android = message.get("android", {})
    checks = [
        (sum(key in message for key in ("token", "topic", "condition")) != 1,
         "Exactly one of token, topic or condition must be given"),
        (not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()),
         "Invalid value at 'message.data[0].value' (TYPE_STRING)"),
        (isinstance(data, dict) and any(RESERVED_DATA.match(key) for key in data),
         "Invalid data payload key"),
        (len(json.dumps(data).encode()) > 4096, "Message is too big"),
        (android.get("priority", "NORMAL") not in ("NORMAL", "HIGH"),
         "Invalid value at 'message.android.priority'"),
        ("ttl" in android and not re.fullmatch(r"\d+(\.\d{1,9})?s", str(android["ttl"])),
         "Invalid value at 'message.android.ttl'"),
    ]  # fmt: skip
    return next((problem for failed, problem in checks if failed), "")


def _error(code: int, status: str, message: str, fcm: str = "") -> dict[str, Any]:
    details = [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": fcm}]
    return {"error": {"code": code, "message": message, "status": status,
                      "details": details if fcm else []}}  # fmt: skip


def _fcm_handler(fake: FakeFcm) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            status, answer = fake.answer(self.path, self.headers.get("Authorization", ""), raw)
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_: Any) -> None:
            return

    return Handler
