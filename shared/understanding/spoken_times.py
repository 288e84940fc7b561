"""When a reminder is said the way people say it: "tomorrow morning", "tonight", "every
Monday at 8", "daily at 7:30".

A part of the day stands for a default clock time (morning 08:00, afternoon 13:00, evening
18:00, night and tonight 20:00), as reminder apps preset them; the approval shows the time,
so the user sees it and can change it before anything is made. An hour said with a part of
the day takes its half ("at 7 in the evening" is 19:00). A repetition becomes an iCalendar
RRULE for the reminder (``recurrence``) and the words of its first time ("every Monday" is
"on Monday", the next one). What is not read here (every weekday, every month on the 1st,
every other week) is left as said, so the plan falls through to the model.

``respoken`` rewrites the message into words ``find_times`` and ``bare_hour`` read, or
returns None when there is nothing to rewrite.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

PART_HOURS = {"morning": 8, "afternoon": 13, "evening": 18, "night": 20}
_PART = r"(?P<part>morning|afternoon|evening|night)"
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY = r"(?P<day>" + "|".join(_DAYS) + r")s?"
_EVERY = r"(?:every|each)"

_REPEATS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"\b{_EVERY}\s+{_DAY}\b", re.I), "weekly"),  # "every monday"
    (re.compile(rf"\bon\s+{_DAY}s\b", re.I), "weekly"),  # "on mondays"
    (re.compile(rf"\b{_EVERY}\s+{_PART}\b", re.I), "daily-part"),  # "every morning"
    (re.compile(rf"\b(?:{_EVERY}\s+day|daily)\b", re.I), "daily"),
]
_UNREAD_REPEAT = re.compile(
    rf"\b(?:{_EVERY}\s+(?:other|second|weekday|week|weekend|month|year|\d)|weekly|monthly|"
    r"yearly|annually|weekdays)\b",
    re.I,
)
_CLOCK = re.compile(r"\b\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|\b\d{1,2}:\d{2}\b", re.I)
_BARE_HOUR = re.compile(
    r"\b(?P<at>at|around)\s+(?P<hour>[1-9]|1[0-2])\b(?!\s*(?::|am|pm|a\.m|p\.m))"
)
_PART_AFTER_DAY = re.compile(
    r"\b(?P<when>tomorrow|today|this|on\s+(?:"
    + "|".join(_DAYS)
    + r")|"
    + "|".join(_DAYS)
    + rf")\s+{_PART}\b",
    re.I,
)
_IN_THE_PART = re.compile(rf"\b(?:in|during)\s+the\s+{_PART}\b", re.I)
_TONIGHT = re.compile(r"\btonight\b", re.I)


@dataclass(frozen=True)
class Respoken:
    text: str
    recurrence: str  # an RRULE, or ""
    every: str  # how the repetition reads in a question ("every Monday"), or ""


def unread_repeat(text: str) -> bool:
    """A repetition this module does not read ("every weekday"): never planned as once."""
    return _UNREAD_REPEAT.search(text) is not None


def respoken(text: str, now: datetime, timezone: str) -> Respoken | None:
    """The message in words the time readers take, or None: nothing to rewrite, or a
    repetition not read here (see ``unread_repeat``)."""
    if unread_repeat(text):
        return None
    rewritten, recurrence, every = _repeat(text)
    rewritten = _parts(rewritten, now.astimezone(ZoneInfo(timezone)))
    if rewritten == text:
        return None
    return Respoken(re.sub(r"\s+", " ", rewritten).strip(), recurrence, every)


def _repeat(text: str) -> tuple[str, str, str]:
    searched = [(pattern.search(text), kind) for pattern, kind in _REPEATS]
    found = [(match, kind) for match, kind in searched if match is not None]
    if len(found) != 1:
        return text, "", ""
    match, kind = found[0]
    before, after = text[: match.start()], text[match.end() :]
    if kind == "weekly":
        day = match["day"].lower()
        rule = f"FREQ=WEEKLY;BYDAY={day[:2].upper()}"
        return f"{before}on {day}{after}", rule, f"every {day.capitalize()}"
    if kind == "daily-part":
        return f"{before}in the {match['part'].lower()}{after}", "FREQ=DAILY", "every day"
    return f"{before}{after}", "FREQ=DAILY", "every day"


def _parts(text: str, local_now: datetime) -> str:
    """A part of the day as its clock time; an hour said with one, as its half of the day."""
    part = _PART_AFTER_DAY.search(text) or _IN_THE_PART.search(text)
    tonight = _TONIGHT.search(text)
    if part is None and tonight is None:
        return text
    said = part or tonight
    assert said is not None
    name, span = (part["part"].lower() if part is not None else "night"), said.span()
    if part is not None and part.groupdict().get("when") is not None:
        when = part["when"].lower().replace("this", "today")
    elif part is not None:  # "in the morning": the next one
        when = "today" if local_now.hour < PART_HOURS[name] else "tomorrow"
    else:
        when = "today"
    hour = _BARE_HOUR.search(text)
    if _CLOCK.search(text):
        clock = ""  # "tomorrow morning at 7:30am": the clock says it
    elif hour is not None:
        h = int(hour["hour"]) % 12 + (0 if name == "morning" else 12)
        text = f"{text[: hour.start()]}{text[hour.end() :]}"
        span = _shifted(span, hour.span())
        clock = f" at {h:02d}:00"
    else:
        clock = f" at {PART_HOURS[name]:02d}:00"
    return f"{text[: span[0]]}{when}{clock}{text[span[1] :]}"


def _shifted(span: tuple[int, int], removed: tuple[int, int]) -> tuple[int, int]:
    """``span`` after the text of ``removed`` was cut out before it (or not)."""
    if removed[1] <= span[0]:
        width = removed[1] - removed[0]
        return span[0] - width, span[1] - width
    return span
