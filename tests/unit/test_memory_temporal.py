"""Time markers resolve deterministically in the user's zone: examples, then properties."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.services.memory.temporal import (
    add_months,
    clock_time,
    resolve_anchor,
    resolve_date,
)

SATURDAY = date(2026, 11, 21)
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december"]  # fmt: skip
ZONES = ["UTC", "Europe/Zurich", "America/Los_Angeles", "Asia/Kolkata", "Pacific/Kiritimati",
         "Pacific/Pago_Pago", "America/Santiago", "Australia/Lord_Howe"]  # fmt: skip

days = st.dates(min_value=date(1990, 1, 1), max_value=date(2090, 12, 31))
instants = st.datetimes(
    min_value=datetime(1990, 1, 1), max_value=datetime(2090, 12, 31), timezones=st.just(UTC)
)


@pytest.mark.parametrize(
    ("marker", "expected"),
    [
        ("today", date(2026, 11, 21)),
        ("tonight", date(2026, 11, 21)),
        ("tomorrow", date(2026, 11, 22)),
        ("the day after tomorrow", date(2026, 11, 23)),
        ("yesterday", date(2026, 11, 20)),
        ("next Friday", date(2026, 11, 27)),
        ("this Friday", date(2026, 11, 27)),
        ("on Saturday", date(2026, 11, 21)),
        ("next Saturday", date(2026, 11, 28)),
        ("last Friday", date(2026, 11, 20)),
        ("in 3 days", date(2026, 11, 24)),
        ("in two weeks", date(2026, 12, 5)),
        ("in a month", date(2026, 12, 21)),
        ("3 days ago", date(2026, 11, 18)),
        ("next week", date(2026, 11, 23)),
        ("next month", date(2026, 12, 1)),
        ("next year", date(2027, 1, 1)),
        ("this weekend", date(2026, 11, 21)),
        ("next weekend", date(2026, 11, 28)),
        ("on June 15", date(2027, 6, 15)),
        ("June 15th, 2027", date(2027, 6, 15)),
        ("15 June", date(2027, 6, 15)),
        ("the 3rd of March", date(2027, 3, 3)),
        ("on December 24", date(2026, 12, 24)),
        ("2026-12-24", date(2026, 12, 24)),
        ("24.12.", date(2026, 12, 24)),
        ("24.12.2027", date(2027, 12, 24)),
        ("am 15. Juni", date(2027, 6, 15)),
        ("nächsten Freitag", date(2026, 11, 27)),
        ("morgen", date(2026, 11, 22)),
        ("heute Morgen", date(2026, 11, 21)),
        ("übermorgen", date(2026, 11, 23)),
        ("in 3 Wochen", date(2026, 12, 12)),
        ("Feb 29", date(2028, 2, 29)),
    ],
)
def test_markers_seen_from_a_saturday(marker: str, expected: date) -> None:
    assert resolve_date(marker, SATURDAY) == expected


@pytest.mark.parametrize("marker", ["sometime", "in June", "Feb 30", "2026-13-40", "soon", ""])
def test_markers_that_name_no_day(marker: str) -> None:
    assert resolve_date(marker, SATURDAY) is None


def test_tomorrow_is_the_users_tomorrow_not_the_servers() -> None:
    late_in_utc = datetime(2026, 11, 21, 23, 30, tzinfo=UTC)  # already Sunday in Zurich
    zurich = resolve_anchor("tomorrow", None, late_in_utc, "Europe/Zurich")
    los_angeles = resolve_anchor("tomorrow", None, late_in_utc, "America/Los_Angeles")
    assert zurich == datetime(2026, 11, 22, 23, 0, tzinfo=UTC)  # Monday 00:00 CET
    assert los_angeles == datetime(2026, 11, 22, 8, 0, tzinfo=UTC)  # Sunday 00:00 PST


def test_a_clock_time_sets_the_hour_and_an_iso_date_is_only_a_fallback() -> None:
    now = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
    at_three = resolve_anchor("tomorrow at 3pm", "2030-01-01", now, "Europe/Zurich")
    assert at_three == datetime(2026, 11, 22, 14, 0, tzinfo=UTC)
    assert resolve_anchor("sometime", "2026-12-01", now, "UTC") == datetime(2026, 12, 1, tzinfo=UTC)
    assert resolve_anchor(None, "not a date", now, "UTC") is None
    assert resolve_anchor(None, None, now, "UTC") is None


def test_an_unknown_zone_falls_back_to_utc() -> None:
    now = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
    assert resolve_anchor("today", None, now, "Mars/Olympus") == datetime(2026, 11, 21, tzinfo=UTC)


@pytest.mark.parametrize(
    ("marker", "expected"),
    [("at 3pm", time(15)), ("12am", time(0)), ("12pm", time(12)), ("15:30", time(15, 30)),
     ("um 9 Uhr", time(9)), ("at 13pm", None), ("25:00", None), ("tomorrow", None)],
)  # fmt: skip
def test_clock_times(marker: str, expected: time | None) -> None:
    assert clock_time(marker) == expected


@given(days, st.integers(min_value=0, max_value=400))
def test_in_n_days_is_exactly_n_days_later(today: date, n: int) -> None:
    assert resolve_date(f"in {n} days", today) == today + timedelta(days=n)


@given(days, st.integers(min_value=0, max_value=60))
def test_in_n_months_keeps_the_day_or_clamps_it_to_the_months_end(today: date, n: int) -> None:
    day = resolve_date(f"in {n} months", today)
    assert day is not None and day == add_months(today, n)
    assert (day.year * 12 + day.month) - (today.year * 12 + today.month) == n
    assert day.day == today.day or (day.day < today.day and (day + timedelta(days=1)).day == 1)


@given(days, st.sampled_from(range(7)), st.sampled_from(["", "this ", "on ", "coming "]))
def test_this_weekday_is_the_next_such_day_today_included(
    today: date, weekday: int, prefix: str
) -> None:
    day = resolve_date(f"{prefix}{WEEKDAYS[weekday]}", today)
    assert day is not None and day.weekday() == weekday
    assert 0 <= (day - today).days <= 6


@given(days, st.sampled_from(range(7)))
def test_next_weekday_falls_in_the_next_calendar_week(today: date, weekday: int) -> None:
    day = resolve_date(f"next {WEEKDAYS[weekday]}", today)
    assert day is not None and day.weekday() == weekday
    assert 1 <= (day - today).days <= 13
    assert (day - timedelta(days=day.weekday())) - (today - timedelta(days=today.weekday())) == (
        timedelta(weeks=1)
    )


@given(days, st.sampled_from(range(7)))
def test_last_weekday_is_within_the_past_week(today: date, weekday: int) -> None:
    day = resolve_date(f"last {WEEKDAYS[weekday]}", today)
    assert day is not None and day.weekday() == weekday
    assert 1 <= (today - day).days <= 7


@given(days, st.sampled_from(range(1, 13)), st.integers(min_value=1, max_value=28))
def test_a_month_and_day_is_the_next_such_date(today: date, month: int, day_of: int) -> None:
    for marker in (f"on {MONTHS[month - 1]} {day_of}", f"{day_of} {MONTHS[month - 1]}"):
        day = resolve_date(marker, today)
        assert day is not None and (day.month, day.day) == (month, day_of)
        assert 0 <= (day - today).days < 366


@given(days, days)
def test_an_iso_date_is_taken_as_written(today: date, written: date) -> None:
    assert resolve_date(f"on {written.isoformat()}", today) == written


@given(instants, st.sampled_from(ZONES), st.integers(min_value=-2, max_value=2))
def test_relative_days_are_counted_in_the_users_zone(now: datetime, zone: str, n: int) -> None:
    marker = {-2: "day before yesterday", -1: "yesterday", 0: "today", 1: "tomorrow"}.get(
        n, "day after tomorrow"
    )
    anchor = resolve_anchor(marker, None, now, zone)
    assert anchor is not None and anchor.tzinfo == UTC
    local_today = now.astimezone(ZoneInfo(zone)).date()
    assert anchor.astimezone(ZoneInfo(zone)).date() == local_today + timedelta(days=n)


@given(st.text(max_size=60), days)
def test_any_text_resolves_to_a_day_or_to_none_never_an_error(text: str, today: date) -> None:
    day = resolve_date(text, today)
    assert day is None or isinstance(day, date)


@given(st.text(max_size=60), instants, st.text(max_size=30))
def test_any_marker_and_zone_name_gives_a_utc_anchor_or_none(
    text: str, now: datetime, zone: str
) -> None:
    anchor = resolve_anchor(text, text, now, zone)
    assert anchor is None or anchor.tzinfo == UTC
