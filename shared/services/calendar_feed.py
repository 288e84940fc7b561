"""The user's calendar as an RFC 5545 feed (``icalendar``): what Google Calendar, Apple
Calendar and Thunderbird read from a subscribed URL.

Events are VEVENTs, a recurring one with its RRULE; open reminders are VTODOs due at their
time, each with a VALARM at the due time (apps that show tasks, such as Thunderbird and
Apple's, ring them; Google Calendar shows events only). Times are written in the user's
time zone with its VTIMEZONE, so a weekly 9:00 stays at 9:00 across daylight saving time.
Text is escaped by the library: a title cannot open a component of its own.

Subscribers poll on their own schedule (Google every several hours; REFRESH-INTERVAL is a
hint most ignore): the feed is for seeing, never for alerts.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from icalendar import Alarm, Calendar, Event, Todo, vDuration, vRecur

from shared.models.agent_data import CalendarEvent, Reminder

PRODUCT_ID = "-//Personal assistant//Calendar feed//EN"
REFRESH = timedelta(hours=1)  # asked of subscribers; Google re-reads every several hours
UID_DOMAIN = "calendar.assistant"


def feed_calendar(
    events: list[CalendarEvent],
    reminders: list[Reminder],
    zone: str,
    now: datetime,
    name: str = "Assistant",
) -> Calendar:
    tz = ZoneInfo(zone)
    calendar = Calendar()
    calendar.add("prodid", PRODUCT_ID)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("method", "PUBLISH")
    calendar.add("name", name)
    calendar.add("x-wr-calname", name)
    calendar.add("x-wr-timezone", zone)
    calendar.add("refresh-interval", REFRESH, parameters={"VALUE": "DURATION"})
    calendar.add("x-published-ttl", vDuration(REFRESH))
    for event in events:
        calendar.add_component(_event(event, tz, now))
    for reminder in reminders:
        calendar.add_component(_todo(reminder, tz, now))
    calendar.add_missing_timezones()
    return calendar


def feed_bytes(
    events: list[CalendarEvent], reminders: list[Reminder], zone: str, now: datetime
) -> bytes:
    ical: bytes = feed_calendar(events, reminders, zone, now).to_ical()
    return ical


def _event(event: CalendarEvent, tz: ZoneInfo, now: datetime) -> Event:
    item = Event()
    item.add("uid", f"event-{event.id}@{UID_DOMAIN}")
    item.add("dtstamp", now)
    item.add("created", event.created_at)
    item.add("summary", event.title)
    item.add("dtstart", event.start.astimezone(tz))
    item.add("dtend", event.end.astimezone(tz))
    if event.location:
        item.add("location", event.location)
    if event.recurrence:
        item.add("rrule", vRecur.from_ical(event.recurrence))
    return item


def _todo(reminder: Reminder, tz: ZoneInfo, now: datetime) -> Todo:
    """A recurring reminder repeats from its due time (RFC 5545 wants DTSTART beside RRULE)."""
    item = Todo()
    item.add("uid", f"reminder-{reminder.id}@{UID_DOMAIN}")
    item.add("dtstamp", now)
    item.add("summary", reminder.text)
    item.add("due", reminder.due_at.astimezone(tz))
    if reminder.recurrence:
        item.add("dtstart", reminder.due_at.astimezone(tz))
        item.add("rrule", vRecur.from_ical(reminder.recurrence))
    item.add("status", "COMPLETED" if reminder.done else "NEEDS-ACTION")
    if not reminder.done:
        alarm = Alarm()
        alarm.add("action", "DISPLAY")
        alarm.add("description", reminder.text)
        alarm.add("trigger", timedelta(0), parameters={"RELATED": "END"})  # at DUE
        item.add_component(alarm)
    return item
