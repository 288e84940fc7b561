"""The calendar feed as calendar apps read it: it parses back with ``icalendar``, its RRULEs
expand with ``recurring-ical-events`` (across a DST change, at the same local time), open
reminders are VTODOs with an alarm, and text cannot break out of its property."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import icalendar
import pytest
import recurring_ical_events
from pydantic import ValidationError

from shared.models.agent_data import CalendarEvent, Reminder
from shared.services.calendar_feed import feed_bytes

NOW = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)  # a Monday; Zurich moves to summer time on 29 March
ZURICH = ZoneInfo("Europe/Zurich")


def event(title: str = "Standup", recurrence: str = "", **changes: object) -> CalendarEvent:
    start = datetime(2026, 3, 2, 9, 0, tzinfo=ZURICH)
    fields = {"id": "e1", "title": title, "start": start, "end": start + timedelta(minutes=15),
              "recurrence": recurrence, "created_at": NOW, **changes}  # fmt: skip
    return CalendarEvent.model_validate(fields)


def reminder(done: bool = False, recurrence: str = "") -> Reminder:
    return Reminder(id="r1", text="Call mum", due_at=NOW + timedelta(days=1),
                    state="done" if done else "pending", recurrence=recurrence,
                    created_at=NOW)  # fmt: skip


def parsed(events: list[CalendarEvent], reminders: list[Reminder]) -> icalendar.Calendar:
    return icalendar.Calendar.from_ical(feed_bytes(events, reminders, "Europe/Zurich", NOW))


def test_the_feed_parses_back_with_its_time_zone() -> None:
    calendar = parsed([event(location="Room 4")], [reminder()])
    assert calendar["VERSION"] == "2.0" and calendar["X-WR-CALNAME"] == "Assistant"
    [zone] = calendar.walk("VTIMEZONE")
    assert zone["TZID"] == "Europe/Zurich"
    [vevent] = calendar.walk("VEVENT")
    assert vevent["SUMMARY"] == "Standup" and vevent["LOCATION"] == "Room 4"
    assert vevent["DTSTART"].params["TZID"] == "Europe/Zurich"
    assert vevent.decoded("DTSTART") == datetime(2026, 3, 2, 9, 0, tzinfo=ZURICH)
    assert str(vevent["UID"]) == "event-e1@calendar.assistant"


def test_a_weekly_entry_expands_at_the_same_local_time_across_daylight_saving() -> None:
    calendar = parsed([event(recurrence="FREQ=WEEKLY;BYDAY=MO;COUNT=6")], [])
    [vevent] = calendar.walk("VEVENT")
    assert vevent["RRULE"]["FREQ"] == ["WEEKLY"]
    found = recurring_ical_events.of(calendar).between(date(2026, 3, 1), date(2026, 5, 1))
    starts = [e.decoded("DTSTART") for e in found]
    assert len(starts) == 6
    assert {(s.hour, s.minute) for s in starts} == {(9, 0)}  # 08:00 UTC, then 07:00 UTC
    assert starts[-1].utcoffset() == timedelta(hours=2) != starts[0].utcoffset()


def test_an_open_reminder_is_a_todo_that_rings_at_its_due_time() -> None:
    calendar = parsed([], [reminder()])
    [todo] = calendar.walk("VTODO")
    assert todo["SUMMARY"] == "Call mum" and todo["STATUS"] == "NEEDS-ACTION"
    assert todo.decoded("DUE") == NOW + timedelta(days=1)
    [alarm] = todo.walk("VALARM")
    assert alarm["ACTION"] == "DISPLAY" and alarm["TRIGGER"].params["RELATED"] == "END"
    assert alarm.decoded("TRIGGER") == timedelta(0)
    [done] = parsed([], [reminder(done=True)]).walk("VTODO")
    assert done["STATUS"] == "COMPLETED" and done.walk("VALARM") == []


def test_a_recurring_reminder_repeats_in_the_feed() -> None:
    calendar = parsed([], [reminder(recurrence="FREQ=WEEKLY;BYDAY=MO")])
    [todo] = calendar.walk("VTODO")
    assert todo.decoded("DTSTART") == NOW + timedelta(days=1)
    assert todo["RRULE"]["FREQ"] == ["WEEKLY"] and todo["RRULE"]["BYDAY"] == ["MO"]


def test_a_title_cannot_open_a_component_of_its_own() -> None:
    sneaky = "Lunch\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nSUMMARY:Injected"
    calendar = parsed([event(title=sneaky)], [])
    [vevent] = calendar.walk("VEVENT")
    assert "Injected" in vevent["SUMMARY"] and "END:VEVENT" in vevent["SUMMARY"]


@pytest.mark.parametrize(
    "rule",
    ["FREQ=MINUTELY", "FREQ=HOURLY;INTERVAL=1", "FREQ=DAILY;X-EVIL=1", "RRULE:FREQ=DAILY",
     "FREQ=WEEKLY\r\nBEGIN:VEVENT", "FREQ=DAILY;" + "BYDAY=MO;" * 40],
)  # fmt: skip
def test_a_rule_that_is_not_a_calendar_recurrence_is_refused(rule: str) -> None:
    with pytest.raises(ValidationError):
        event(recurrence=rule)
