"""``ReminderStore`` and ``NotificationStore``, the same tests on the in-memory fakes and on
the Firestore emulator: a version rings once however many deliveries race, the lists page
by keyset, the sweep sees only what no task holds, the push channels are claimed once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta, timezone

import pytest

from shared.models.agent_data import Reminder
from shared.models.notifications import Device, Notification, NotificationSettings, QuietHours
from shared.services.reminders import changes
from tests.contract.conftest import NotifyBackend, unique

T0 = datetime(2030, 1, 7, 9, tzinfo=UTC)


def reminder(reminder_id: str, hours: float, text: str = "call Tom") -> Reminder:
    due = T0 + timedelta(hours=hours)
    return Reminder(id=reminder_id, text=text, due_at=due, created_at=T0, updated_at=T0)


def test_a_version_rings_once_however_many_deliveries_race(notify_backend: NotifyBackend) -> None:
    user, store = unique("u"), notify_backend.reminders
    made, created = store.create(user, reminder("r1", 1))
    assert created and store.create(user, reminder("r1", 5, "other"))[0] == made
    ring_at = T0 + timedelta(hours=1)

    def deliver(_: int) -> bool:
        return store.fire(user, "r1", lambda r: changes.ring(r, 1, ring_at)) is not None

    with ThreadPoolExecutor(max_workers=6) as pool:
        assert sorted(pool.map(deliver, range(12))) == [False] * 11 + [True]
    fired = store.get(user, "r1")
    assert fired is not None and fired.state == "fired"
    [note] = notify_backend.inbox.list_inbox(user, 10)
    assert note.id == changes.notification_id(made) and note.target.reminder_id == "r1"


def test_an_old_version_rings_nothing(notify_backend: NotifyBackend) -> None:
    user, store = unique("u"), notify_backend.reminders
    store.create(user, reminder("r1", 1))
    snoozed = store.change(user, "r1", lambda r: changes.snoozed(r, "1h", T0))
    assert snoozed is not None and snoozed.version == 2
    assert store.fire(user, "r1", lambda r: changes.ring(r, 1, T0)) is None
    assert store.fire(user, "missing", lambda r: changes.ring(r, 1, T0)) is None
    assert notify_backend.inbox.list_inbox(user, 10) == []


def test_open_and_done_lists_page_by_keyset(notify_backend: NotifyBackend) -> None:
    user, store = unique("u"), notify_backend.reminders
    for n, hours in enumerate([3, 1, 2, 4]):
        store.create(user, reminder(f"r{n}", hours))
    first = store.list_open(user, 2)
    assert [r.id for r in first] == ["r1", "r2"]
    rest = store.list_open(user, 5, (first[-1].due_at, first[-1].id))
    assert [r.id for r in rest] == ["r0", "r3"]
    for n, minutes in (("r0", 1), ("r3", 2)):
        store.change(user, n, lambda r, m=minutes: changes.completed(r, T0 + timedelta(minutes=m)))
    assert [r.id for r in store.list_open(user, 10)] == ["r1", "r2"]
    assert [r.id for r in store.list_done(user, 10)] == ["r3", "r0"]  # latest first
    store.change(user, "r1", lambda r: changes.cancelled(r, T0))
    assert [r.id for r in store.list_open(user, 10)] == ["r2"]
    assert store.list_open(unique("other"), 10) == []


def test_a_reminder_reads_back_as_the_same_instant_and_only_for_its_user(
    notify_backend: NotifyBackend,
) -> None:
    user, store = unique("u"), notify_backend.reminders
    zurich = timezone(timedelta(hours=1))
    written = reminder("r1", 2).model_copy(
        update={"due_at": (T0 + timedelta(hours=2)).astimezone(zurich)}
    )
    store.create(user, written)
    assert store.get(user, "r1") == written  # the same instant, in UTC
    neighbour = f"{user}_2"  # shares the uid as a prefix
    assert store.get(neighbour, "r1") is None and store.list_open(neighbour, 10) == []
    assert store.change(neighbour, "r1", lambda r: changes.completed(r, T0)) is None


@pytest.mark.parametrize("bad", ["", "a/b", "..", "__reserved__"])
def test_ids_that_name_another_path_are_refused(notify_backend: NotifyBackend, bad: str) -> None:
    with pytest.raises(ValueError):
        notify_backend.reminders.list_open(bad, 10)


def test_the_sweep_sees_only_what_no_task_holds(notify_backend: NotifyBackend) -> None:
    user, store = unique("u"), notify_backend.reminders
    store.create(user, reminder("r1", 1))
    store.create(user, reminder("r2", 2))
    horizon = T0 + timedelta(hours=3)

    def mine() -> list[str]:
        return sorted(d.reminder.id for d in store.unqueued(horizon, 1000) if d.user_id == user)

    assert mine() == ["r1", "r2"]
    store.mark_queued(user, "r1", 1)
    store.mark_queued(user, "r2", 7)  # another version: no
    assert mine() == ["r2"]
    store.change(user, "r1", lambda r: changes.snoozed(r, "10m", T0))  # a new version
    assert mine() == ["r1", "r2"]


def note(note_id: str, minutes: int) -> Notification:
    return Notification(id=note_id, kind="job_done", title="A task is done", body="x",
                        created_at=T0 + timedelta(minutes=minutes))  # fmt: skip


def test_the_inbox_lists_marks_read_and_clears(notify_backend: NotifyBackend) -> None:
    user, inbox = unique("u"), notify_backend.inbox
    assert [inbox.add(user, note(f"n{n}", n)) for n in range(3)] == [True] * 3
    assert inbox.add(user, note("n1", 9)) is False  # the same event again
    assert [n.id for n in inbox.list_inbox(user, 10)] == ["n2", "n1", "n0"]
    read = inbox.mark_read(user, "n1")
    assert read is not None and read.read
    assert [n.id for n in inbox.list_inbox(user, 10, unread_only=True)] == ["n2", "n0"]
    page = inbox.list_inbox(user, 1)
    after = inbox.list_inbox(user, 10, (page[0].created_at, page[0].id))
    assert [n.id for n in after] == ["n1", "n0"]
    assert inbox.mark_all_read(user) == 2
    assert inbox.list_inbox(user, 10, unread_only=True) == []
    assert inbox.delete(user, "n0") and not inbox.delete(user, "n0")
    assert inbox.clear(user) == 2 and inbox.list_inbox(user, 10) == []


def test_the_pushes_are_claimed_once_until_a_failed_claim_is_released(
    notify_backend: NotifyBackend,
) -> None:
    user, inbox = unique("u"), notify_backend.inbox
    inbox.add(user, note("n1", 0))
    with ThreadPoolExecutor(max_workers=6) as pool:
        claims = list(pool.map(lambda _: inbox.claim_push(user, "n1", T0, 60), range(8)))
    assert sorted(claims) == [False] * 7 + [True]
    inbox.release_push(user, "n1")
    assert inbox.claim_push(user, "n1", T0, 60)
    assert inbox.claim_push(user, "n1", T0 + timedelta(seconds=61), 60)  # a lease ran out
    inbox.settle_push(user, "n1", T0)
    assert not inbox.claim_push(user, "n1", T0 + timedelta(hours=1), 60)
    assert not inbox.claim_push(user, "missing", T0, 60)


def test_devices_and_settings(notify_backend: NotifyBackend) -> None:
    user, inbox = unique("u"), notify_backend.inbox
    phone = Device(id="d1", kind="fcm", fcm_token="tok", created_at=T0)
    assert inbox.add_device(user, phone) == phone
    later = phone.model_copy(update={"created_at": T0 + timedelta(days=1)})
    assert inbox.add_device(user, later) == phone  # registered again: the first one
    assert [d.id for d in inbox.list_devices(user, 10)] == ["d1"]
    assert inbox.list_devices(unique("other"), 10) == []
    assert inbox.remove_device(user, "d1") and not inbox.remove_device(user, "d1")
    assert inbox.get_settings(user) == NotificationSettings()
    quiet = NotificationSettings(quiet_hours=QuietHours(start="22:00", end="07:00"))
    inbox.put_settings(user, quiet)
    assert inbox.get_settings(user) == quiet
