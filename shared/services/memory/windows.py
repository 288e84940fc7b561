"""Time windows for temporal retrieval: "next week" -> [its Monday, the Monday after).

Built on ``temporal.resolve_date`` (which names the first day) plus the span the words
cover, read in the user's zone. A reference nobody can read falls back to the days ahead.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta

from shared.services.memory.temporal import add_months, resolve_date, zone_of

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
