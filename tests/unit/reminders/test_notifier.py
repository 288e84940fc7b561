"""The notification port: the inbox first, then each device once; the user's settings
steer the pushes (kinds, quiet hours in their zone, urgent passes), never the inbox."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from shared.errors import DependencyUnavailable
from shared.fakes.clock import FixedClock
from shared.fakes.reminders import FakeNotificationStore
from shared.models.notifications import (
    Device,
    Notification,
    NotificationSettings,
    QuietHours,
    push_payload,
)
from shared.ports import PushOutcome
from shared.services.notify.notifier import Notifier, in_quiet_hours

NOW = datetime(2026, 11, 28, 22, 30, tzinfo=UTC)  # 23:30 in Zurich


class Channel:
    kind = "fcm"

    def __init__(self, outcome: PushOutcome = "sent", fail: bool = False) -> None:
        self.sent: list[str] = []
        self.outcome = outcome
        self.fail = fail

    def check(self, device: Device) -> None:
        return None

    def send(self, device: Device, notification: Notification) -> PushOutcome:
        if self.fail:
            raise DependencyUnavailable("fcm: 503")
        self.sent.append(notification.id)
        return self.outcome


def note(urgent: bool = False, body: str = "call Tom") -> Notification:
    return Notification(id="n1", kind="reminder_due", title="Reminder", body=body,
                        urgent=urgent, created_at=NOW)  # fmt: skip


def setup(channel: Channel) -> tuple[Notifier, FakeNotificationStore]:
    store = FakeNotificationStore()
    store.add_device("u", Device(id="d1", kind="fcm", fcm_token="t", created_at=NOW))
    return Notifier(store, [channel], FixedClock(NOW)), store


def test_the_inbox_then_one_push_however_often_it_is_told() -> None:
    channel = Channel()
    notifier, store = setup(channel)
    assert notifier.notify("u", note()).pushed == 1
    again = notifier.notify("u", note())
    assert (again.new, again.pushed, again.held) == (False, 0, "claimed")
    assert channel.sent == ["n1"] and len(store.list_inbox("u", 10)) == 1


def test_a_failed_send_leaves_the_pushes_to_a_redelivery() -> None:
    channel = Channel(fail=True)
    notifier, _ = setup(channel)
    with pytest.raises(DependencyUnavailable):
        notifier.notify("u", note())
    channel.fail = False
    assert notifier.notify("u", note()).pushed == 1


def test_a_device_the_service_forgot_is_pruned() -> None:
    notifier, store = setup(Channel(outcome="gone"))
    assert notifier.notify("u", note()).pushed == 0
    assert store.list_devices("u", 10) == []


@pytest.mark.parametrize(
    ("quiet", "urgent", "pushed"),
    [(QuietHours(start="22:00", end="07:00"), False, 0),  # 23:30 local: quiet
     (QuietHours(start="22:00", end="07:00"), True, 1),  # urgent passes
     (QuietHours(start="08:00", end="22:00"), False, 1),  # outside
     (None, False, 1)],
)  # fmt: skip
def test_quiet_hours_in_the_users_zone_hold_back_all_but_urgent(
    quiet: QuietHours | None, urgent: bool, pushed: int
) -> None:
    notifier, store = setup(Channel())
    store.put_settings("u", NotificationSettings(quiet_hours=quiet, time_zone="Europe/Zurich"))
    assert notifier.notify("u", note(urgent=urgent)).pushed == pushed
    assert len(store.list_inbox("u", 10)) == 1


def test_held_pushes_are_due_when_the_quiet_hours_end_in_the_users_zone() -> None:
    notifier, store = setup(Channel())
    quiet = QuietHours(start="22:00", end="07:00")
    store.put_settings("u", NotificationSettings(quiet_hours=quiet, time_zone="Europe/Zurich"))
    held = notifier.notify("u", note())
    assert held.until == datetime(2026, 11, 29, 6, tzinfo=UTC)  # 07:00 in Zurich
    later = Notifier(store, [Channel()], FixedClock(held.until))
    assert later.notify("u", note()).pushed == 1  # then it is sent, once


def test_quiet_hours_without_a_zone_are_read_in_utc() -> None:
    settings = NotificationSettings(quiet_hours=QuietHours(start="23:00", end="23:59"))
    assert not in_quiet_hours(settings, NOW)  # 22:30 UTC


def test_a_kind_turned_off_pushes_nothing() -> None:
    notifier, store = setup(Channel())
    store.put_settings("u", NotificationSettings(kinds={"reminder_due": False}))
    assert notifier.notify("u", note()).held == "kind_off"


def test_the_push_payload_is_strings_and_small() -> None:
    payload = push_payload(note(body="x" * 1000).model_copy(update={"body": "é" * 1000}))
    assert all(isinstance(value, str) for value in payload.values())
    assert len(str(payload).encode()) < 4096 and payload["id"] == "n1"
