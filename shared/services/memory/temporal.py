"""Time markers ("next Friday", "in 3 weeks", "on June 15") resolved to a UTC time anchor.

Deterministic and pure: the marker is read in the user's IANA time zone at the moment of
extraction, so "tomorrow" said at 23:30 in Zurich is the next Zurich day whatever the server's
clock zone. A weak model's date arithmetic is not trusted; its ISO ``date`` is only a fallback
when the marker cannot be read. English and common German forms are understood.

Conventions (a marker is kept verbatim next to its anchor, so a reader can always check):
- a day without a time anchors at local midnight; "at 3pm" / "15:30" sets the time;
- "this/on/<weekday>": the next such day, today included; "next <weekday>": that day in the
  next calendar week (Monday first); "last <weekday>": the latest such day before today;
- a month and day without a year: the next such date, today included;
- "next week": its Monday; "next month"/"next year": its first day; weekends start Saturday.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_WEEKDAYS = {
    **dict.fromkeys(("monday", "mon", "montag"), 0),
    **dict.fromkeys(("tuesday", "tue", "tues", "dienstag"), 1),
    **dict.fromkeys(("wednesday", "wed", "mittwoch"), 2),
    **dict.fromkeys(("thursday", "thu", "thur", "thurs", "donnerstag"), 3),
    **dict.fromkeys(("friday", "fri", "freitag"), 4),
    **dict.fromkeys(("saturday", "sat", "samstag", "sonnabend"), 5),
    **dict.fromkeys(("sunday", "sun", "sonntag"), 6),
}
MONTHS = {
    **dict.fromkeys(("january", "jan", "januar", "jänner"), 1),
    **dict.fromkeys(("february", "feb", "februar"), 2),
    **dict.fromkeys(("march", "mar", "märz", "maerz"), 3),
    **dict.fromkeys(("april", "apr"), 4),
    **dict.fromkeys(("may", "mai"), 5),
    **dict.fromkeys(("june", "jun", "juni"), 6),
    **dict.fromkeys(("july", "jul", "juli"), 7),
    **dict.fromkeys(("august", "aug"), 8),
    **dict.fromkeys(("september", "sep", "sept"), 9),
    **dict.fromkeys(("october", "oct", "oktober", "okt"), 10),
    **dict.fromkeys(("november", "nov"), 11),
    **dict.fromkeys(("december", "dec", "dezember", "dez"), 12),
}
# Longer phrases first: "day after tomorrow" must win over "tomorrow", "heute" over "morgen".
_RELATIVE_DAYS = (
    ("day after tomorrow", 2),
    ("day before yesterday", -2),
    ("übermorgen", 2),
    ("vorgestern", -2),
    ("today", 0),
    ("tonight", 0),
    ("this morning", 0),
    ("this afternoon", 0),
    ("this evening", 0),
    ("heute", 0),
    ("tomorrow", 1),
    ("morgen", 1),
    ("yesterday", -1),
    ("gestern", -1),
)
_NUMBERS = {
    **dict.fromkeys(("a", "an", "one", "einem", "einer", "ein"), 1),
    **dict.fromkeys(("two", "zwei", "a couple of", "a few"), 2),
    **dict.fromkeys(("three", "drei"), 3),
    **dict.fromkeys(("four", "vier"), 4),
    **dict.fromkeys(("five", "fünf"), 5),
    **dict.fromkeys(("six", "sechs"), 6),
    **dict.fromkeys(("seven", "sieben"), 7),
    **dict.fromkeys(("eight", "acht"), 8),
    **dict.fromkeys(("nine", "neun"), 9),
    **dict.fromkeys(("ten", "zehn"), 10),
    **dict.fromkeys(("eleven", "elf"), 11),
    **dict.fromkeys(("twelve", "zwölf"), 12),
}
_UNITS = {
    **dict.fromkeys(("day", "days", "tag", "tagen", "tage"), "day"),
    **dict.fromkeys(("week", "weeks", "woche", "wochen"), "week"),
    **dict.fromkeys(("month", "months", "monat", "monaten", "monate"), "month"),
    **dict.fromkeys(("year", "years", "jahr", "jahren", "jahre"), "year"),
}
MAX_OFFSET = 1000  # "in 10000000 days" is not a plan; it would overflow ``date``

_WD = "|".join(sorted(_WEEKDAYS, key=len, reverse=True))
_MO = "|".join(sorted(MONTHS, key=len, reverse=True))
_NUM = "|".join([r"\d{1,4}", *sorted(_NUMBERS, key=len, reverse=True)])
_UNIT = "|".join(sorted(_UNITS, key=len, reverse=True))

_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DOTTED = re.compile(r"\b(\d{1,2})\.(\d{1,2})\.(\d{4})?(?!\d)")
_IN_N = re.compile(rf"\b(?:in|within) ({_NUM}) ({_UNIT})\b")
_N_AGO = re.compile(rf"\b({_NUM}) ({_UNIT}) ago\b|\bvor ({_NUM}) ({_UNIT})\b")
_WEEKDAY = re.compile(
    rf"\b(?:(next|this|coming|last|nächsten|nächster|kommenden|diesen|letzten) )?({_WD})\b"
)
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th|\.)? (?:of )?({_MO})\b(?:,? (\d{{4}}))?")
_MONTH_DAY = re.compile(rf"\b({_MO})\.? (\d{{1,2}})(?:st|nd|rd|th)?\b(?:,? (\d{{4}}))?")
_NEXT_SPAN = re.compile(
    r"\b(next|this|coming|nächste|nächsten|nächstes|kommende|kommenden|diese|dieses|diesen)"
    r" (week|month|year|weekend|woche|monat|jahr|wochenende)\b"
)
_CLOCK = re.compile(r"\b(?:at |um )?(\d{1,2})(?::(\d{2}))? ?(am|pm|uhr)\b|\b(\d{1,2}):(\d{2})\b")


def zone_of(name: str) -> ZoneInfo:
    """The user's zone; an unknown or malformed name falls back to UTC rather than failing."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def resolve_anchor(
    marker: str | None, iso_date: str | None, now: datetime, timezone: str
) -> datetime | None:
    """The UTC instant a marker points at, read in ``timezone`` at ``now``; None if unknown."""
    zone = zone_of(timezone)
    local_now = now.astimezone(zone)
    day = resolve_date(marker, local_now.date()) if marker else None
    if day is None and iso_date:
        day = parse_iso_date(iso_date)
    if day is None:
        return None
    clock = clock_time(marker) if marker else None
    local = datetime.combine(day, clock or time(0, 0), tzinfo=zone)
    return local.astimezone(UTC)


def parse_iso_date(text: str) -> date | None:
    try:
        return date.fromisoformat(text.strip()[:10])
    except ValueError:
        return None


def resolve_date(marker: str, today: date) -> date | None:
    """The calendar day ``marker`` names, seen from ``today``; None if it names none."""
    text = _normalise(marker)
    for reader in _READERS:
        try:
            day = reader(text, today)
        except (ValueError, OverflowError):  # Feb 30, year 10000: no such day
            return None
        if day is not None:
            return day
    return None


def clock_time(marker: str) -> time | None:
    match = _CLOCK.search(_normalise(marker))
    if match is None:
        return None
    if match.group(4) is not None:
        hour, minute, suffix = int(match.group(4)), int(match.group(5)), None
    else:
        hour, minute, suffix = int(match.group(1)), int(match.group(2) or 0), match.group(3)
    if suffix in ("am", "pm"):
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if suffix == "pm" else 0)
    if hour > 23 or minute > 59:
        return None
    return time(hour, minute)


def add_months(day: date, months: int) -> date:
    """Calendar months, clamping the day: Jan 31 + 1 month is Feb 28 (or 29)."""
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    last = calendar.monthrange(year, month + 1)[1]
    return date(year, month + 1, min(day.day, last))


def _normalise(marker: str) -> str:
    text = re.sub(r"(\d)t(\d)", r"\1 \2", marker.casefold())  # ISO "2026-12-24T10:00"
    return " ".join(text.replace(",", ", ").split())


def _number(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS[word]


def _shift(today: date, count: int, unit: str) -> date | None:
    if abs(count) > MAX_OFFSET:
        return None
    if unit == "day":
        return today + timedelta(days=count)
    if unit == "week":
        return today + timedelta(weeks=count)
    return add_months(today, count * (12 if unit == "year" else 1))


def _iso(text: str, today: date) -> date | None:
    match = _ISO.search(text)
    return date(*map(int, match.groups())) if match else None


def _dotted(text: str, today: date) -> date | None:
    match = _DOTTED.search(text)
    if match is None:
        return None
    day, month = int(match.group(1)), int(match.group(2))
    if match.group(3):
        return date(int(match.group(3)), month, day)
    return _next_yearly(month, day, today)


def _relative_day(text: str, today: date) -> date | None:
    for phrase, offset in _RELATIVE_DAYS:
        if re.search(rf"\b{phrase}\b", text):
            return today + timedelta(days=offset)
    return None


def _in_n(text: str, today: date) -> date | None:
    match = _IN_N.search(text)
    if match:
        return _shift(today, _number(match.group(1)), _UNITS[match.group(2)])
    match = _N_AGO.search(text)
    if match:
        count, unit = match.group(1, 2) if match.group(1) else match.group(3, 4)
        return _shift(today, -_number(count), _UNITS[unit])
    return None


def _span(text: str, today: date) -> date | None:
    match = _NEXT_SPAN.search(text)
    if match is None:
        return None
    is_next = not match.group(1).startswith(("this", "dies"))
    unit = {"woche": "week", "monat": "month", "jahr": "year", "wochenende": "weekend"}.get(
        match.group(2), match.group(2)
    )
    monday = today - timedelta(days=today.weekday())
    if unit == "week":
        return monday + timedelta(weeks=1) if is_next else today
    if unit == "weekend":
        saturday = monday + timedelta(days=5)
        return saturday + timedelta(weeks=1) if is_next else max(saturday, today)
    if unit == "month":
        return add_months(today.replace(day=1), 1) if is_next else today
    return date(today.year + 1, 1, 1) if is_next else today


def _weekday(text: str, today: date) -> date | None:
    match = _WEEKDAY.search(text)
    if match is None:
        return None
    which, target = match.group(1), _WEEKDAYS[match.group(2)]
    ahead = (target - today.weekday()) % 7
    if which in ("next", "nächsten", "nächster"):
        monday = today - timedelta(days=today.weekday())
        return monday + timedelta(weeks=1, days=target)
    if which in ("last", "letzten"):
        return today - timedelta(days=(today.weekday() - target) % 7 or 7)
    return today + timedelta(days=ahead)


def _month_and_day(text: str, today: date) -> date | None:
    match = _DAY_MONTH.search(text)
    if match:
        day, month, year = int(match.group(1)), MONTHS[match.group(2)], match.group(3)
    else:
        match = _MONTH_DAY.search(text)
        if match is None:
            return None
        month, day, year = MONTHS[match.group(1)], int(match.group(2)), match.group(3)
    if year:
        return date(int(year), month, day)
    return _next_yearly(month, day, today)


def _next_yearly(month: int, day: int, today: date) -> date | None:
    """The next ``month``/``day`` on or after today (Feb 29: the next leap year's)."""
    for year in range(today.year, today.year + 9):
        if day <= calendar.monthrange(year, month)[1]:
            candidate = date(year, month, day)
            if candidate >= today:
                return candidate
    return None


_READERS: tuple[Callable[[str, date], date | None], ...] = (
    _iso,
    _dotted,
    _relative_day,
    _in_n,
    _span,
    _weekday,
    _month_and_day,
)
