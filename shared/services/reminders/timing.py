"""When a reminder rings: validation of what a user or the assistant sets, the next
occurrence of a recurrence, and where a snooze moves it.

Times are stored in UTC; a recurrence is evaluated in the reminder's IANA zone on naive wall
times (dateutil's rrule), then each occurrence is placed in the zone (``fold=0``: an hour
that happens twice at the autumn change rings at its first pass; one skipped in spring rings
at the same wall time read with the offset before the change, i.e. an hour later). So a daily
9:00 rings at 9:00 local on both sides of a DST change, once.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dateutil import rrule

from shared.errors import DueAtInPast, DueAtTooFar, InvalidRecurrence, UnknownTimeZone
from shared.models.agent_data import Reminder

MAX_AHEAD = timedelta(days=3653)  # ten years
MORNING = time(8, 0)  # "tomorrow morning"
SNOOZES = {"10m": timedelta(minutes=10), "1h": timedelta(hours=1)}
# A reminder is a person's prompt, not a timer: nothing rings more often than hourly.
ALLOWED_FREQUENCIES = {"HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY"}


def zone(name: str) -> ZoneInfo:
    """The IANA zone of that name; anything else (a path, an offset, a typo) is refused."""
    if not name or name.startswith("/") or ".." in name or name != name.strip():
        raise UnknownTimeZone(f"time_zone {name!r} is not an IANA zone name")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise UnknownTimeZone(f"time_zone {name!r} is not an IANA zone name") from exc


def check_due(due_at: datetime, now: datetime) -> datetime:
    """``due_at`` in UTC to the second (as RFC 5545 times are), if it is in the future and at
    most ten years ahead."""
    if due_at <= now:
        raise DueAtInPast("due_at is in the past; a reminder rings in the future")
    if due_at - now > MAX_AHEAD:
        raise DueAtTooFar("due_at is more than ten years ahead")
    return due_at.astimezone(UTC).replace(microsecond=0)


def parse_rule(text: str, first: datetime, time_zone: str) -> rrule.rrule:
    """The RRULE ``text`` starting at ``first`` (its wall time in ``time_zone``)."""
    body = text.removeprefix("RRULE:")
    parts = dict(part.partition("=")[::2] for part in body.split(";"))
    if parts.get("FREQ") not in ALLOWED_FREQUENCIES:
        raise InvalidRecurrence(f"recurrence needs FREQ of {sorted(ALLOWED_FREQUENCIES)}")
    if "DTSTART" in body or "\n" in body:
        raise InvalidRecurrence("recurrence is one RRULE; its start is due_at")
    start = first.astimezone(zone(time_zone)).replace(tzinfo=None)
    try:
        parsed = rrule.rrulestr(body, dtstart=start)
    except (ValueError, TypeError) as exc:
        raise InvalidRecurrence(f"recurrence is not an RFC 5545 RRULE: {exc}") from exc
    if not isinstance(parsed, rrule.rrule):
        raise InvalidRecurrence("recurrence is one RRULE")
    if parsed.after(start, inc=True) is None:
        raise InvalidRecurrence("recurrence never rings")
    return parsed


def check_recurrence(text: str, first: datetime, time_zone: str) -> str:
    """The rule as stored (no ``RRULE:`` prefix), "" for one-off; refused if it is not one."""
    if not text:
        return ""
    parse_rule(text, first, time_zone)
    return text.removeprefix("RRULE:")


def next_occurrence(reminder: Reminder, after: datetime) -> datetime | None:
    """The series' first occurrence strictly after ``after`` (UTC), or None: it has ended."""
    if not reminder.recurrence:
        return None
    anchor = reminder.anchor_at or reminder.due_at
    where = zone(reminder.time_zone)
    rule = parse_rule(reminder.recurrence, anchor, reminder.time_zone)
    local_after = after.astimezone(where).replace(tzinfo=None)
    while True:
        found: datetime | None = rule.after(local_after, inc=False)
        if found is None:
            return None
        at = found.replace(tzinfo=where).astimezone(UTC)
        if at > after:  # a skipped hour read back may land before ``after``
            return at
        local_after = found


def snoozed_until(snooze: str, now: datetime, time_zone: str) -> datetime:
    if snooze in SNOOZES:
        return now + SNOOZES[snooze]
    where = zone(time_zone)
    tomorrow = now.astimezone(where).date() + timedelta(days=1)
    return datetime.combine(tomorrow, MORNING, tzinfo=where).astimezone(UTC)
