"""Time windows for temporal retrieval: "next week" -> [its Monday, the Monday after).

Built on ``temporal.resolve_date`` (which names the first day) plus the span the words
cover, read in the user's zone. A reference nobody can read falls back to the days ahead
(``window_for``); a question about the past ("what did I do last week?") gets the window it
names, or none (``past_window``).
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta

from shared.services.memory.temporal import MONTHS, add_months, resolve_date, zone_of

UPCOMING_DAYS = 14  # "what's coming up?" and unreadable references
_UNITS = (
    (re.compile(r"\b(weekend|wochenende)\b"), "weekend"),
    (re.compile(r"\b(week|woche)\b"), "week"),
    (re.compile(r"\b(month|monat)\b"), "month"),
    (re.compile(r"\b(year|jahr)\b"), "year"),
)


def window_for(reference: str, now: datetime, timezone: str) -> tuple[datetime, datetime]:
    """The UTC interval [start, end) a time reference covers, seen at ``now``."""
    zone = zone_of(timezone)
    today = now.astimezone(zone).date()
    first = resolve_date(reference, today)
    if first is None:
        start, end = today, today + timedelta(days=UPCOMING_DAYS)
    else:
        start, end = first, _end_of(first, _unit(reference))
    return (
        datetime.combine(start, time(0, 0), tzinfo=zone).astimezone(UTC),
        datetime.combine(end, time(0, 0), tzinfo=zone).astimezone(UTC),
    )


def _unit(reference: str) -> str:
    text = reference.lower()
    return next((unit for pattern, unit in _UNITS if pattern.search(text)), "day")


def _end_of(first: date, unit: str) -> date:
    if unit == "weekend":
        return first + timedelta(days=2 if first.weekday() == 5 else 1)
    if unit == "week":
        return first - timedelta(days=first.weekday()) + timedelta(weeks=1)
    if unit == "month":
        return add_months(first.replace(day=1), 1)
    if unit == "year":
        return date(first.year + 1, 1, 1)
    return first + timedelta(days=1)


_LAST_SPAN = re.compile(
    r"\b(last|past|previous|letzte|letzten|letztes)"
    r" (week|month|year|weekend|woche|monat|jahr|wochenende)\b"
)
_IN_MONTH = re.compile(
    rf"\b(?:in|im|during) ({'|'.join(sorted(MONTHS, key=len, reverse=True))})\b(?: (\d{{4}}))?"
)
_IN_YEAR = re.compile(r"\b(?:in|im|during) (\d{4})\b")
_PAST = re.compile(r"\b(did|was|were|had|went|ago|last|war|waren|hatte)\b")


def past_window(question: str, now: datetime, timezone: str) -> tuple[datetime, datetime] | None:
    """The UTC interval a question's time words cover ("last week", "in May", "in 2023",
    "two days ago", "on June 3"), seen at ``now``; None when it names no time. A month
    without a year is its latest occurrence up to now."""
    zone = zone_of(timezone)
    today = now.astimezone(zone).date()
    text = question.casefold()
    span = _last_span(text, today) or _in_month_or_year(text, today)
    if span is None:
        first = resolve_date(text, today)
        if first is None:
            return None
        if first > today and _PAST.search(text):  # "what did I do on June 3": the last one
            first = _last_before(first, today)
        span = (first, _end_of(first, _unit(text)))
    start, end = span
    return (
        datetime.combine(start, time(0, 0), tzinfo=zone).astimezone(UTC),
        datetime.combine(end, time(0, 0), tzinfo=zone).astimezone(UTC),
    )


def _last_before(day: date, today: date) -> date:
    """The latest occurrence before today of a weekday or a date the reader put ahead."""
    if day - today <= timedelta(days=7):
        return day - timedelta(days=7)
    if (day.month, day.day) == (2, 29):
        return day - timedelta(days=366)
    return day.replace(year=day.year - 1)


def _last_span(text: str, today: date) -> tuple[date, date] | None:
    match = _LAST_SPAN.search(text)
    if match is None:
        return None
    unit = {"woche": "week", "monat": "month", "jahr": "year", "wochenende": "weekend"}.get(
        match.group(2), match.group(2)
    )
    monday = today - timedelta(days=today.weekday())
    if unit == "week":
        return monday - timedelta(weeks=1), monday
    if unit == "weekend":
        saturday = monday - timedelta(days=2)
        return saturday, monday
    if unit == "month":
        first = add_months(today.replace(day=1), -1)
        return first, today.replace(day=1)
    return date(today.year - 1, 1, 1), date(today.year, 1, 1)


def _in_month_or_year(text: str, today: date) -> tuple[date, date] | None:
    match = _IN_MONTH.search(text)
    if match is not None:
        month = MONTHS[match.group(1)]
        year = int(match.group(2)) if match.group(2) else today.year
        if not match.group(2) and month > today.month:
            year -= 1  # "in May" asked in March: last May
        first = date(year, month, 1)
        return first, add_months(first, 1)
    match = _IN_YEAR.search(text)
    if match is not None:
        year = int(match.group(1))
        return date(year, 1, 1), date(year + 1, 1, 1)
    return None
