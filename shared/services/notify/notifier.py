"""Tell the user something: the inbox first, then push to every registered device.

At-least-once callers (queues, retried handlers) are safe: the notification's id is stable,
so the inbox keeps one document, and the push channels are sent by the one delivery that
claims them (``NotificationStore.claim_push``; a claim that dies runs out after ``LEASE``
seconds, so a later redelivery sends them). Every payload carries the id, so a client drops
a push a channel delivered twice.

The user's settings steer the pushes, never the inbox: a kind turned off sends no push;
quiet hours in the user's zone hold back all but urgent notifications (``Delivered.until``:
the caller schedules the pushes for the end of the quiet hours); the inbox has it at once.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta

from shared.models.notifications import Device, Notification, NotificationSettings
from shared.ports import Clock, NotificationStore, PushChannel
from shared.services.reminders.timing import zone

log = logging.getLogger("notify")
LEASE = 60.0  # seconds a delivery holds the push channels
DEVICE_PAGE = 100


@dataclass(frozen=True)
class Delivered:
    new: bool  # the inbox did not have it yet
    pushed: int  # pushes sent now
    held: str = ""  # why nothing was pushed: "kind_off", "quiet_hours", "claimed"
    until: datetime | None = None  # quiet hours: when they end (the pushes are due then)


def in_quiet_hours(settings: NotificationSettings, now: datetime) -> bool:
    quiet = settings.quiet_hours
    if quiet is None:
        return False
    local = now.astimezone(zone(settings.time_zone)).time()
    start, end = time.fromisoformat(quiet.start), time.fromisoformat(quiet.end)
    if start <= end:
        return start <= local < end
    return local >= start or local < end  # across midnight


def quiet_end(settings: NotificationSettings, now: datetime) -> datetime:
    """The next end of the quiet hours after ``now`` (UTC), read in the user's zone."""
    assert settings.quiet_hours is not None
    where = zone(settings.time_zone)
    local = now.astimezone(where)
    end = time.fromisoformat(settings.quiet_hours.end)
    at = datetime.combine(local.date(), end, tzinfo=where)
    if at <= local:
        at = datetime.combine(local.date() + timedelta(days=1), end, tzinfo=where)
    return at.astimezone(UTC)


class Notifier:
    def __init__(
        self, store: NotificationStore, channels: Sequence[PushChannel], clock: Clock
    ) -> None:
        self._store = store
        self._channels = {channel.kind: channel for channel in channels}
        self._clock = clock

    def notify(self, user_id: str, notification: Notification) -> Delivered:
        new = self._store.add(user_id, notification)
        return self.push(user_id, notification, new)

    def push(self, user_id: str, notification: Notification, new: bool = True) -> Delivered:
        """Push an inbox notification to the user's devices, once."""
        now = self._clock.now()
        settings = self._store.get_settings(user_id)
        if not settings.wants(notification.kind):
            return Delivered(new, 0, "kind_off")
        if not notification.urgent and in_quiet_hours(settings, now):
            return Delivered(new, 0, "quiet_hours", quiet_end(settings, now))
        if not self._store.claim_push(user_id, notification.id, now, LEASE):
            return Delivered(new, 0, "claimed")
        try:
            sent = sum(
                self._send(user_id, device, notification) for device in self._devices(user_id)
            )
        except Exception:
            self._store.release_push(user_id, notification.id)  # a redelivery sends them
            raise
        self._store.settle_push(user_id, notification.id, self._clock.now())
        return Delivered(new, sent)

    def _devices(self, user_id: str) -> list[Device]:
        return self._store.list_devices(user_id, DEVICE_PAGE)

    def _send(self, user_id: str, device: Device, notification: Notification) -> int:
        channel = self._channels.get(device.kind)
        if channel is None:
            return 0
        outcome = channel.send(device, notification)
        if outcome == "gone":  # the push service forgot it: so do we
            self._store.remove_device(user_id, device.id)
            log.info("device pruned", extra={"kind": device.kind})
        return 1 if outcome == "sent" else 0
