"""The ``/v1`` wire contract of reminders, the notification inbox and push registration
(``docs/openapi.yaml``). Bodies are strict JSON; resources answer with their ``id``."""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from shared.models.agent_data import ReminderState, ShortText
from shared.models.base import Strict
from shared.models.notifications import (
    DeviceKind,
    NotificationKind,
    NotificationTarget,
    QuietHours,
    WebPushSubscription,
)


class ReminderResource(Strict):
    id: str
    text: str
    due_at: AwareDatetime  # the next time it rings (UTC)
    time_zone: str
    recurrence: str  # "" when one-off, else an RFC 5545 RRULE
    state: ReminderState
    urgent: bool
    etag: str
    created_at: AwareDatetime
    updated_at: AwareDatetime
    completed_at: AwareDatetime | None = None


class ReminderPage(Strict):
    reminders: list[ReminderResource]
    next_page_token: str


class ReminderPatch(Strict):
    """``PATCH /v1/reminders/{reminder}``: any of the fields; absent ones stay."""

    text: ShortText | None = None
    due_at: AwareDatetime | None = None
    time_zone: str | None = Field(default=None, min_length=1, max_length=64)
    recurrence: str | None = Field(default=None, max_length=500)
    urgent: bool | None = None
    etag: str | None = None


class NewReminder(Strict):
    """``POST /v1/reminders`` (what the assistant's tool stores, for clients too)."""

    text: ShortText
    due_at: AwareDatetime
    time_zone: str = Field(default="UTC", min_length=1, max_length=64)
    recurrence: str = Field(default="", max_length=500)
    urgent: bool = False


Snooze = Literal["10m", "1h", "tomorrow_morning"]


class SnoozeBody(Strict):
    snooze: Snooze


class EmptyBody(Strict):
    """A custom method's body: nothing (``{}`` or empty)."""


class NotificationResource(Strict):
    id: str
    kind: NotificationKind
    title: str
    body: str
    urgent: bool
    read: bool
    created_at: AwareDatetime
    target: NotificationTarget


class NotificationPage(Strict):
    notifications: list[NotificationResource]
    next_page_token: str


class PushConfig(Strict):
    web_push_public_key: str  # VAPID: base64url of the uncompressed P-256 point


class NewDevice(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: DeviceKind
    web_push: WebPushSubscription | None = None
    fcm_token: str | None = Field(default=None, min_length=1, max_length=4096)

    @model_validator(mode="after")
    def _one_channel(self) -> NewDevice:
        if (self.kind == "web_push") != (self.web_push is not None):
            raise ValueError("kind web_push takes web_push, and only it does")
        if (self.kind == "fcm") != (self.fcm_token is not None):
            raise ValueError("kind fcm takes fcm_token, and only it does")
        return self


class DeviceResource(Strict):
    id: str
    kind: DeviceKind
    created_at: AwareDatetime


class DevicePage(Strict):
    devices: list[DeviceResource]
    next_page_token: str


class NotificationSettingsResource(Strict):
    kinds: dict[str, bool]
    quiet_hours: QuietHours | None
    time_zone: str
    etag: str


class NotificationSettingsPatch(Strict):
    kinds: dict[str, bool] | None = None
    quiet_hours: QuietHours | None = None
    time_zone: str | None = Field(default=None, min_length=1, max_length=64)
    etag: str | None = None
