"""When reminders ring: a daily 9:00 across the DST changes of Europe/Zurich (2026-10-25,
2027-03-28) and America/New_York (2026-11-01, 2027-03-14) rings at 9:00 local on both sides,
once a day; what is refused; where a snooze lands. The delivery's ringing is driven through
``changes.ring`` with a fixed clock, as the handler runs it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from shared.errors import DueAtInPast, DueAtTooFar, InvalidRecurrence, UnknownTimeZone
from shared.models.agent_data import Reminder
from shared.models.notify_api import NewReminder
from shared.services.reminders import changes
from shared.services.reminders.timing import check_due, next_occurrence, snoozed_until, zone


def daily_nine(zone_name: str, first_local: datetime) -> Reminder:
    first = first_local.replace(tzinfo=ZoneInfo(zone_name)).astimezone(UTC)
    new = NewReminder(text="pills", due_at=first, time_zone=zone_name, recurrence="FREQ=DAILY")
    return changes.created("r1", new, first - timedelta(days=1))


def ring_days(reminder: Reminder, days: int) -> list[datetime]:
    """Deliver each version at its due time (late by a second); the UTC times it rang."""
    rang = []
    for _ in range(days):
        moment = reminder.due_at + timedelta(seconds=1)
        rung = changes.ring(reminder, reminder.version, moment)
        assert rung is not None
        rang.append(reminder.due_at)
        assert changes.ring(reminder, reminder.version - 1, moment) is None  # an old version
        reminder = rung[0]
        assert changes.ring(reminder, reminder.version - 1, moment) is None  # a redelivery
    return rang


@pytest.mark.parametrize(
    ("zone_name", "first_local", "change_day"),
    [
        ("Europe/Zurich", datetime(2026, 10, 23, 9), datetime(2026, 10, 25).date()),
        ("Europe/Zurich", datetime(2027, 3, 26, 9), datetime(2027, 3, 28).date()),
        ("America/New_York", datetime(2026, 10, 30, 9), datetime(2026, 11, 1).date()),
        ("America/New_York", datetime(2027, 3, 12, 9), datetime(2027, 3, 14).date()),
    ],
)
def test_a_daily_nine_rings_at_nine_local_on_both_sides_of_a_dst_change(
    zone_name: str, first_local: datetime, change_day: object
) -> None:
    rang = ring_days(daily_nine(zone_name, first_local), 5)
    local = [moment.astimezone(ZoneInfo(zone_name)) for moment in rang]
    assert [(m.hour, m.minute) for m in local] == [(9, 0)] * 5
    days = [m.date() for m in local]
    assert days == [first_local.date() + timedelta(days=n) for n in range(5)]  # once a day
    assert change_day in days
    offsets = {m.utcoffset() for m in local}
    assert len(offsets) == 2  # the UTC time moved by the hour the clocks did


def test_an_hour_skipped_in_spring_rings_once_an_hour_later_and_the_repeated_one_once() -> None:
    spring = daily_nine("Europe/Zurich", datetime(2027, 3, 27, 2, 30))  # 02:30 daily
    rang = ring_days(spring, 3)
    local = [m.astimezone(ZoneInfo("Europe/Zurich")) for m in rang]
    assert [(m.day, m.hour, m.minute) for m in local] == [(27, 2, 30), (28, 3, 30), (29, 2, 30)]
    autumn = daily_nine("Europe/Zurich", datetime(2026, 10, 24, 2, 30))  # 02:30 twice on 25th
    rang = ring_days(autumn, 3)
    assert len(set(rang)) == 3
    assert rang[1] == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)  # its first pass (CEST)


def test_monthly_on_the_first_and_weekly_on_monday() -> None:
    first = datetime(2026, 12, 1, 8, 0, tzinfo=ZoneInfo("Europe/Zurich"))
    new = NewReminder(text="rent", due_at=first, time_zone="Europe/Zurich",
                      recurrence="FREQ=MONTHLY;BYMONTHDAY=1")  # fmt: skip
    monthly = changes.created("m", new, first - timedelta(days=2))
    after = next_occurrence(monthly, first)
    assert after == datetime(2027, 1, 1, 7, 0, tzinfo=UTC)
    monday = datetime(2026, 11, 30, 9, 0, tzinfo=ZoneInfo("America/New_York"))
    new = NewReminder(text="standup", due_at=monday, time_zone="America/New_York",
                      recurrence="RRULE:FREQ=WEEKLY;BYDAY=MO")  # fmt: skip
    weekly = changes.created("w", new, monday - timedelta(days=2))
    assert weekly.recurrence == "FREQ=WEEKLY;BYDAY=MO"
    assert next_occurrence(weekly, monday) == monday + timedelta(days=7)


def test_a_series_that_ends_leaves_the_last_one_fired() -> None:
    due = datetime(2026, 12, 1, 9, tzinfo=UTC)
    new = NewReminder(text="x", due_at=due, recurrence="FREQ=DAILY;COUNT=2")
    reminder = changes.created("c", new, due - timedelta(hours=1))
    second, _ = changes.ring(reminder, 1, due) or (None, None)
    assert second is not None and second.state == "pending" and second.version == 2
    last, _ = changes.ring(second, 2, second.due_at) or (None, None)
    assert last is not None and last.state == "fired"


NOW = datetime(2026, 11, 28, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    ("due", "error"),
    [
        (NOW - timedelta(seconds=1), DueAtInPast),
        (NOW, DueAtInPast),
        (NOW + timedelta(days=3654), DueAtTooFar),
    ],
)
def test_due_times_out_of_range_are_refused(due: datetime, error: type[Exception]) -> None:
    with pytest.raises(error):
        check_due(due, NOW)


@pytest.mark.parametrize("name", ["Mars/Olympus", "", "/etc/localtime", "../UTC", " UTC", "+02:00"])
def test_unknown_zones_are_refused(name: str) -> None:
    with pytest.raises(UnknownTimeZone):
        zone(name)


@pytest.mark.parametrize(
    "rule",
    [
        "FREQ=SECONDLY",
        "FREQ=MINUTELY",
        "FREQ=DAILY;BYHOUR=25",
        "BYDAY=MO",
        "FREQ=DAILY;UNTIL=2020",
        "FREQ=DAILY\nDTSTART:20260101T000000",
        "FREQ=WEEKLY;BYDAY=XX",
        "FREQ=DAILY;COUNT=0",
        "FREQ=DAILY;UNTIL=20200101T000000",
    ],
)
def test_bad_rules_are_refused(rule: str) -> None:
    new = NewReminder(text="x", due_at=NOW + timedelta(hours=1), recurrence=rule)
    with pytest.raises(InvalidRecurrence):
        changes.created("x", new, NOW)


def test_snoozes() -> None:
    assert snoozed_until("10m", NOW, "UTC") == NOW + timedelta(minutes=10)
    assert snoozed_until("1h", NOW, "UTC") == NOW + timedelta(hours=1)
    late = datetime(2026, 11, 28, 23, 30, tzinfo=UTC)  # already the 29th in Zurich
    morning = snoozed_until("tomorrow_morning", late, "Europe/Zurich")
    assert morning.astimezone(ZoneInfo("Europe/Zurich")) == datetime(
        2026, 11, 30, 8, tzinfo=ZoneInfo("Europe/Zurich"))  # fmt: skip
