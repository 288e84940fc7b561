"""What the user is told about, and where: the in-app inbox's notifications, the devices
(browsers and phones) that receive push, and the user's notification preferences.

A notification's ``id`` is stable: derived from what it is about (a reminder's version, an
approval's interrupt), so a redelivered event writes the same document and every channel's
payload carries the same id, which a client uses to drop a duplicate.
"""

from __future__ import annotations

import json
from typing import Annotated, Literal

from pydantic import AwareDatetime, Field, StringConstraints

from shared.models.base import Strict

NotificationKind = Literal[
    "reminder_due",
    "approval_waiting",
    "approval_expiring",
    "job_done",
    "job_failed",
    "escalation",
    "email_failed",
]
# The kinds a user can turn off (``approval_expiring`` follows ``approval_waiting``).
SETTING_KINDS = (
    "reminder_due",
    "approval_waiting",
    "job_done",
    "job_failed",
    "escalation",
    "email_failed",
)
NOTIFICATION_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
DEVICE_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
Title = Annotated[str, StringConstraints(min_length=1, max_length=120)]
Body = Annotated[str, StringConstraints(max_length=1000)]


class NotificationTarget(Strict):
    """What a tap opens."""

    chat_id: str | None = Field(default=None, max_length=128)
    reminder_id: str | None = Field(default=None, max_length=64)
    job_id: str | None = Field(default=None, max_length=128)
    question_id: str | None = Field(default=None, max_length=128)


class Notification(Strict):
    id: str = Field(pattern=NOTIFICATION_ID_PATTERN)
    kind: NotificationKind
    title: Title
    body: Body
    urgent: bool = False
    read: bool = False
    created_at: AwareDatetime
    target: NotificationTarget = NotificationTarget()

    def url(self) -> str:
        """Where the client goes on a tap (the push payload's ``url``)."""
        if self.target.reminder_id and not self.target.chat_id:
            return "/#reminders"
        if self.target.chat_id:
            return f"/?chat={self.target.chat_id}"
        return "/"


class WebPushKeys(Strict):
    p256dh: str = Field(pattern=r"^[A-Za-z0-9_-]{80,100}={0,2}$")  # 65-byte P-256 point
    auth: str = Field(pattern=r"^[A-Za-z0-9_-]{20,24}={0,2}$")  # 16 bytes


class WebPushSubscription(Strict):
    endpoint: str = Field(min_length=9, max_length=2000)
    keys: WebPushKeys


DeviceKind = Literal["web_push", "fcm"]


class Device(Strict):
    """A browser's push subscription or a phone's FCM registration token."""

    id: str = Field(pattern=DEVICE_ID_PATTERN)
    kind: DeviceKind
    web_push: WebPushSubscription | None = None
    fcm_token: str | None = Field(default=None, max_length=4096)
    created_at: AwareDatetime


class QuietHours(Strict):
    start: str = Field(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")
    end: str = Field(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")


class NotificationSettings(Strict):
    """Which kinds notify (all by default) and when to hold back all but urgent ones."""

    kinds: dict[str, bool] = Field(default_factory=lambda: dict.fromkeys(SETTING_KINDS, True))
    quiet_hours: QuietHours | None = None
    time_zone: str = Field(default="UTC", min_length=1, max_length=64)
    updated_at: AwareDatetime | None = None

    def wants(self, kind: NotificationKind) -> bool:
        key = "approval_waiting" if kind == "approval_expiring" else kind
        return self.kinds.get(key, True)


MAX_PUSH_BYTES = 3000  # FCM's limit is 4 KB of data, Web Push's about 4 KB of record


def push_payload(notification: Notification) -> dict[str, str]:
    """What every push channel carries (strings only, as FCM's data requires), the same
    ``id`` as the inbox's, so a client drops a duplicate; the body is cut to fit."""
    payload = {
        "id": notification.id,
        "kind": notification.kind,
        "title": notification.title,
        "body": notification.body,
        "url": notification.url(),
    }
    while len(json.dumps(payload).encode()) > MAX_PUSH_BYTES:
        payload["body"] = payload["body"][: len(payload["body"]) * 3 // 4]
    return payload
