"""Reminders that ring, the inbox, push channels, and messages sent for the user (mail, outbox)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from shared.models.agent_data import (
    OutboundEmail,
    RelayAnswer,
    Reminder,
    SentMessage,
)
from shared.models.notifications import Device, Notification, NotificationSettings
from shared.models.notify_api import NewReminder
from shared.ports.infra import Keyset


@dataclass(frozen=True)
class DueReminder:
    user_id: str
    reminder: Reminder


# A delivery's decision, inside the reminder's transaction: the reminder as it is after
# ringing and the notification to write with it, or None: this delivery rings nothing.
Ring = Callable[[Reminder], tuple[Reminder, Notification] | None]


class ReminderStore(Protocol):
    """The reminders that ring, their changes one transaction each, and what the delivery
    sweep needs."""

    def create(self, user_id: str, reminder: Reminder) -> tuple[Reminder, bool]:
        """Store it unless its id exists; (the stored one, whether it was created)."""
        ...

    def get(self, user_id: str, reminder_id: str) -> Reminder | None: ...

    def list_open(self, user_id: str, limit: int, after: Keyset | None = None) -> list[Reminder]:
        """Pending and fired ones by ``(due_at, id)``, earliest first."""
        ...

    def list_done(self, user_id: str, limit: int, after: Keyset | None = None) -> list[Reminder]:
        """Done ones by ``(completed_at, id)``, latest first."""
        ...

    def change(
        self, user_id: str, reminder_id: str, change: Callable[[Reminder], Reminder]
    ) -> Reminder | None:
        """Store ``change(current)`` in one transaction (it may raise to refuse: nothing is
        written; an equal result writes nothing); None when there is no such reminder."""
        ...

    def fire(
        self, user_id: str, reminder_id: str, ring: Ring
    ) -> tuple[Reminder, Notification] | None:
        """Apply ``ring`` in one transaction and write its reminder and its notification (the
        inbox) in the same commit; None when there is no such reminder or ``ring`` said no."""
        ...

    def mark_queued(self, user_id: str, reminder_id: str, version: int) -> None:
        """A delivery task holds this version now (the sweep skips it); no-op for another."""
        ...

    def unqueued(self, before: datetime, limit: int) -> list[DueReminder]:
        """Pending reminders of any user due before ``before`` that no task holds yet."""
        ...


class ReminderBook(Protocol):
    """Reminders as the assistant sets them: validated, stored and scheduled at once."""

    def add(self, user_id: str, reminder_id: str, new: NewReminder) -> Reminder:
        """Refused with a ``BadRequest`` code when it cannot ring; a replay of the same id
        answers the stored one."""
        ...

    def listed(self, user_id: str, limit: int, include_done: bool = False) -> list[Reminder]:
        """Open ones by due time (and, with ``include_done``, the done ones too)."""
        ...

    def complete(self, user_id: str, reminder_id: str) -> Reminder | None: ...


class NotificationStore(Protocol):
    """The user's inbox, push devices and notification preferences."""

    def add(self, user_id: str, notification: Notification) -> bool:
        """Write it unless its id exists (a redelivery); whether it was new."""
        ...

    def get(self, user_id: str, notification_id: str) -> Notification | None: ...

    def list_inbox(
        self, user_id: str, limit: int, after: Keyset | None = None, unread_only: bool = False
    ) -> list[Notification]:
        """Newest first by ``(created_at, id)``."""
        ...

    def mark_read(self, user_id: str, notification_id: str) -> Notification | None: ...

    def mark_all_read(self, user_id: str) -> int: ...

    def delete(self, user_id: str, notification_id: str) -> bool: ...

    def clear(self, user_id: str) -> int: ...

    def claim_push(self, user_id: str, notification_id: str, now: datetime, lease: float) -> bool:
        """True for the one delivery that sends its pushes (until ``settle_push``, or until
        the lease runs out for a delivery that died on the way)."""
        ...

    def settle_push(self, user_id: str, notification_id: str, now: datetime) -> None: ...

    def release_push(self, user_id: str, notification_id: str) -> None: ...

    def add_device(self, user_id: str, device: Device) -> Device:
        """Register it; the same id again answers the first registration."""
        ...

    def list_devices(
        self, user_id: str, limit: int, after: Keyset | None = None
    ) -> list[Device]: ...

    def remove_device(self, user_id: str, device_id: str) -> bool: ...

    def get_settings(self, user_id: str) -> NotificationSettings: ...

    def put_settings(self, user_id: str, settings: NotificationSettings) -> None: ...


PushOutcome = Literal["sent", "gone", "failed"]


class PushChannel(Protocol):
    """One push service (Web Push, FCM). ``send`` answers ``gone`` when the service says
    the device is no longer registered (it is then pruned), ``failed`` for a permanent
    refusal of this message; a transient failure raises ``DependencyUnavailable``."""

    @property
    def kind(self) -> str: ...

    def send(self, device: Device, notification: Notification) -> PushOutcome: ...

    def check(self, device: Device) -> None:
        """Refuse (``InvalidDevice``) a registration this service would not deliver to."""
        ...


class Mailer(Protocol):
    """A mail relay (SMTP on 587 with STARTTLS in production, the local stack's SMTP server
    in dev and test). One call hands one message over once; it never retries."""

    @property
    def domain(self) -> str:
        """The sender address's domain: Message-IDs are made in it."""
        ...

    def deliver(self, message: OutboundEmail, message_id: str) -> RelayAnswer:
        """Never raises for what the relay does: a refusal or an unreachable relay is
        ``failed`` (nothing went out), no answer after the data went out is ``unknown``."""
        ...


class EmailNotices(Protocol):
    """Tells the user that a message sent for them failed or may not have gone out: a
    message in the job's chat (``shared.adapters.chat_notices``) and a notification of kind
    ``email_failed`` (``shared.services.notify.email``). Idempotent per record."""

    def email_failed(self, user_id: str, chat_id: str, record: SentMessage) -> None: ...


class Outbox(Protocol):
    """Messages sent on the user's behalf (the agents' sensitive ``email_send``)."""

    def send(self, user_id: str, message: OutboundEmail, idempotency_key: str) -> SentMessage:
        """Send once per (user, key): a later send with the same key, concurrent or not,
        sends nothing and returns the first record, whatever its message (and whatever its
        status: a ``pending`` one of a run that died mid-send is never sent again). With a
        ``Mailer`` the record is written ``pending`` first, then settled with the relay's
        answer; without one, recording is the delivery (``sent`` at once)."""
        ...

    def get_sent(self, user_id: str, idempotency_key: str) -> SentMessage | None: ...

    def fenced(self, since: datetime) -> Outbox:
        """The same store for work created at ``since`` (an agent job): its writes are
        refused with ``AccountErased`` (nothing written) while the account is erased and
        once an erasure finished after ``since``."""
        ...
