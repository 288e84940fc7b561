"""An hour said without am or pm ("remind me to phone Rosa on Sunday at 11"): which of the
two it is cannot be known, so it is never guessed. Both moments become the options of the
reminder's ``due_at`` (``OpenArg``), and the user picks one when approving it.

Only a whole hour from 1 to 11 after "at" or "around" is read this way: 12 is noon by
habit, 13 and later are already unambiguous, and "at 5 in the morning" is not bare.
Without a day, the options are the next time each hour comes round.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from shared.understanding.result import TimeRef
from shared.understanding.times import Times

_HOUR = re.compile(
    r"\s*\b(?:at|around)\s+(?P<hour>[1-9]|1[01])(?:\s*o'clock)?(?=[\s,.!?]|$)"
    r"(?!\s*(?:am|pm|a\.m\.|p\.m\.|h\b|in the|at night|tonight|[:.]\d))",
    re.IGNORECASE,
)
_ALONE = re.compile(r"^(?:at|around)?\s*(?:[1-9]|1[01])(?:\s*o'clock)?$", re.IGNORECASE)


@dataclass(frozen=True)
class BareHour:
    rest: str  # the message without the hour (and without the day, when one was said)
    day: TimeRef | None
    options: list[datetime]  # the moments it may mean, earliest first, all in the future


def bare_hour(text: str, times: Times, now: datetime, timezone: str) -> BareHour | None:
    """The reading of a message whose only time is a bare hour, after at most one day."""
    days = times.resolved
    if len(days) > 1 or any(t.clock for t in days):
        return None
    if any(not _ALONE.match(u.strip()) for u in times.unresolved):
        return None
    found = list(_HOUR.finditer(text))
    if len(found) != 1:
        return None
    match, day = found[0], days[0] if days else None
    if day is not None and day.start <= match.start() < day.end:
        return None
    hour = int(match["hour"])
    zone = ZoneInfo(timezone)
    local_now = now.astimezone(zone)
    if day is None:
        options = [_next(local_now, h, zone) for h in (hour, hour + 12)]
    else:
        options = [_on(day.at.date(), h, zone) for h in (hour, hour + 12)]
    options = sorted(o for o in options if o > local_now)
    if not options:
        return None
    rest = _cut(text, [(match.start(), match.end())] + ([(day.start, day.end)] if day else []))
    return BareHour(rest=rest, day=day, options=options)


def _on(day: date, hour: int, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time(hour), tzinfo=zone)


def _next(local_now: datetime, hour: int, zone: ZoneInfo) -> datetime:
    today = _on(local_now.date(), hour, zone)
    return today if today > local_now else _on(local_now.date() + timedelta(days=1), hour, zone)


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` without ``spans`` (and a "for" or "by" left dangling before one)."""
    for start, end in sorted(spans, reverse=True):
        before = re.sub(r"\s+(?:for|by)\s*$", "", text[:start].rstrip(), flags=re.IGNORECASE)
        text = f"{before} {text[end:].lstrip()}"
    return re.sub(r"\s+", " ", text).strip()
