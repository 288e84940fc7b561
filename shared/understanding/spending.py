"""Spending questions over the window the user names: "how much did i spend this wk", "what
did I spend yesterday", "how much have I spent on restaurants since Monday", "over the last
10 days", "in March". Read as the window's first and last day in the user's time zone (a
week starts on Monday, as every other week the product reads: ``services.memory.windows``),
the words that name it, and a category if one is named. No window named: this month.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

_HEAD = re.compile(
    r"^(?:(?:please|hey|ok|okay|so|and)[, ]+)?(?:(?:can|could) you (?:please )?(?:tell me|check) )?"
    r"(?:how much (?:money )?(?:(?:did|have|had) )?i(?:'ve| have)? (?:spen[dt])"
    r"|what (?:did i spend|have i spent|i spent|i've spent)"
    r"|what(?:'s| is|s)? my (?:total )?spending|my (?:total )?spending|total spen(?:t|ding))"
    r"(?P<rest>.*)$"
)
_FILLER = re.compile(r" (?:money|in total|total|altogether|overall|so far|in all|all up)\b")
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")  # fmt: skip
_DAY = r"(?P<day>mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day|nesday|sday|urday)?"
_MONTH = (
    r"(?P<month>january|february|march|april|may|june|july|august|september|october|november"
    r"|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)"
)
_UNIT = {"week": "week", "wk": "week", "month": "month", "mth": "month", "mo": "month",
         "year": "year", "yr": "year", "weekend": "weekend"}  # fmt: skip
_UNITS = r"(?P<unit>weekend|week|wk|month|mth|mo|year|yr)"
_NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
            "fourteen": 14, "thirty": 30}  # fmt: skip
_COUNT = rf"(?P<count>\d{{1,3}}|{'|'.join(_NUMBERS)})"
_SPANS = r"(?P<span>days?|weeks?|wks?|months?|mths?)"
_OVER = r" (?:(?:over|in|during|for|within) )?"
_PATTERNS = {
    "today": r" (?:today|tdy|2day)\b",
    "yesterday": r" (?:yesterday|yday|yest)\b",
    "recently": r" (?:recently|lately|of late)\b",
    "rolling": rf"{_OVER}(?:the )?(?:last|past) {_COUNT} {_SPANS}\b",
    "rolling_one": rf"{_OVER}(?:the (?:last|past)|past) {_UNITS}\b",
    "this": rf" (?:(?:for|in|during) )?(?:this|the current|current) {_UNITS}\b",
    "last": rf" (?:(?:for|in|during) )?(?:last|previous|prev) {_UNITS}\b",
    "since": rf" since (?:(?:last )?{_DAY}|yesterday|{_MONTH}"
    rf"|the (?P<date>\d{{1,2}})(?:st|nd|rd|th)?)\b",
    "on": rf" on (?:last )?{_DAY}\b",
    "in": rf" (?:in|during|for) {_MONTH}(?: (?P<year>\d{{4}}))?\b",
    "year": r" (?:in|during|for) (?P<year>\d{4})\b",
}
_WINDOWS = tuple((kind, re.compile(pattern)) for kind, pattern in _PATTERNS.items())
_CATEGORY = re.compile(r" (?:on|for) (?:my |the )?(?P<category>[a-z][a-z&-]*(?: [a-z][a-z&-]*)?)")
_NOT_CATEGORIES = frozenset(
    {"it", "that", "this", "these", "those", "them", "her", "his", "him", "their", "our",
     "your", "a", "an", "me", "you", "us", "what", "which", "average", "and", "or"}
)  # fmt: skip
_LONGEST = 3660  # days: ten years
_RECENT_DAYS = 30
_LONGEST_QUESTION = 200  # characters: longer is more than a spending question


@dataclass(frozen=True)
class Window:
    first: date
    last: date  # included
    words: str  # "this week", "since Monday": how the user named it


@dataclass(frozen=True)
class SpendingAsked:
    window: Window
    category: str | None


def spending_asked(text: str, now: datetime, timezone: str) -> SpendingAsked | None:
    """The window (and category) of a question about what the user spent, or None."""
    said = re.sub(r"\s+", " ", text.casefold().replace("\u2019", "'")).strip(" ?.!")
    head = _HEAD.match(said) if len(said) <= _LONGEST_QUESTION else None
    if head is None:
        return None
    today = now.astimezone(ZoneInfo(timezone)).date()
    read = _rest(head["rest"], today, None, None)
    if read is None:
        return None
    window, category = read
    return SpendingAsked(window or _this("month", today), category)


def _rest(
    rest: str, today: date, window: Window | None, category: str | None
) -> tuple[Window | None, str | None] | None:
    """What is left read as fillers, one window and one category, in any order."""
    while filler := _FILLER.match(rest):
        rest = rest[filler.end() :]
    if not rest:
        return window, category
    if window is None:
        for kind, pattern in _WINDOWS:
            if (match := pattern.match(rest)) and (found := _window(kind, match, today)):
                read = _rest(rest[match.end() :], today, found, category)
                if read is not None:
                    return read
    if category is None and (match := _CATEGORY.match(rest)):
        words = match["category"].split(" ")
        for count in (1, 2)[: len(words)]:
            if words[0] in _NOT_CATEGORIES:
                break
            named = " ".join(words[:count])
            after = rest[match.start("category") + len(named) :]
            read = _rest(after, today, window, named)
            if read is not None:
                return read
    return None


def _window(kind: str, match: re.Match[str], today: date) -> Window | None:
    groups = match.groupdict()
    if kind in ("today", "yesterday"):
        day = today - timedelta(days=int(kind == "yesterday"))
        return Window(day, day, kind)
    if kind == "recently":  # "lately": the last 30 days, said as such
        first = today - timedelta(days=_RECENT_DAYS - 1)
        return Window(first, today, f"over the last {_RECENT_DAYS} days")
    if kind in ("this", "last"):
        return (_this if kind == "this" else _last)(_UNIT[groups["unit"]], today)
    if kind == "on":
        day = _last_weekday(groups["day"], today)
        return Window(day, day, f"on {_DAYS[day.weekday()].title()}")
    readers = {"rolling": _rolling, "rolling_one": _rolling, "since": _since, "in": _in_month}
    return readers.get(kind, _in_year)(groups, today)


def _in_year(groups: dict[str, str | None], today: date) -> Window | None:
    year = int(str(groups["year"]))
    if year > today.year or year < 1970:
        return None
    return Window(date(year, 1, 1), date(year, 12, 31), f"in {year}")


def _rolling(groups: dict[str, str | None], today: date) -> Window | None:
    count_word, span = groups.get("count"), groups.get("span") or groups.get("unit") or "day"
    count = 1 if count_word is None else _NUMBERS.get(count_word) or int(count_word)
    unit = "day" if span.startswith("day") else _UNIT.get(span.rstrip("s"), "week")
    if unit == "weekend" or count < 1:
        return None
    if unit in {"month", "year"}:
        months = count * (12 if unit == "year" else 1)
        first = _add_months(today, -months) + timedelta(days=1)
    else:
        first = today - timedelta(days=count * (7 if unit == "week" else 1) - 1)
    if (today - first).days > _LONGEST:
        return None
    plural = "" if count == 1 else "s"
    named = (
        f"the last {unit}"
        if count == 1 and count_word is None
        else f"the last {count} {unit}{plural}"
    )
    return Window(first, today, f"over {named}")


def _this(unit: str, today: date) -> Window:
    monday = today - timedelta(days=today.weekday())
    if unit == "week":
        return Window(monday, monday + timedelta(days=6), "this week")
    if unit == "weekend":
        return Window(monday + timedelta(days=5), monday + timedelta(days=6), "this weekend")
    if unit == "month":
        first = today.replace(day=1)
        return Window(first, _add_months(first, 1) - timedelta(days=1), "this month")
    return Window(date(today.year, 1, 1), date(today.year, 12, 31), "this year")


def _last(unit: str, today: date) -> Window:
    monday = today - timedelta(days=today.weekday())
    if unit == "week":
        return Window(monday - timedelta(days=7), monday - timedelta(days=1), "last week")
    if unit == "weekend":
        return Window(monday - timedelta(days=2), monday - timedelta(days=1), "last weekend")
    if unit == "month":
        first = _add_months(today.replace(day=1), -1)
        return Window(first, today.replace(day=1) - timedelta(days=1), "last month")
    return Window(date(today.year - 1, 1, 1), date(today.year - 1, 12, 31), "last year")


def _since(groups: dict[str, str | None], today: date) -> Window | None:
    if groups.get("day"):
        first = _last_weekday(str(groups["day"]), today)
        return Window(first, today, f"since {_DAYS[first.weekday()].title()}")
    if groups.get("month"):
        month = _month_number(str(groups["month"]))
        year = today.year if month <= today.month else today.year - 1
        return Window(date(year, month, 1), today, f"since {_MONTHS[month - 1].title()}")
    if groups.get("date"):
        day = int(str(groups["date"]))
        month_first = today.replace(day=1) if day <= today.day else _add_months(today, -1)
        try:
            first = month_first.replace(day=day)
        except ValueError:
            return None
        return Window(first, today, f"since the {_ordinal(day)}")
    yesterday = today - timedelta(days=1)
    return Window(yesterday, today, "since yesterday")


def _in_month(groups: dict[str, str | None], today: date) -> Window | None:
    month = _month_number(str(groups["month"]))
    if groups.get("year"):
        year = int(str(groups["year"]))
        named = f"in {_MONTHS[month - 1].title()} {year}"
    else:  # "in March" asked in November: this year's; asked in February: last year's
        year = today.year if month <= today.month else today.year - 1
        named = f"in {_MONTHS[month - 1].title()}"
    first = date(year, month, 1)
    if first > today or year < 1970:
        return None
    return Window(first, _add_months(first, 1) - timedelta(days=1), named)


def _last_weekday(name: str, today: date) -> date:
    """The latest such weekday up to today ("since Monday" on a Monday: today)."""
    target = next(i for i, day in enumerate(_DAYS) if day.startswith(name[:3]))
    return today - timedelta(days=(today.weekday() - target) % 7)


def _month_number(name: str) -> int:
    return next(i for i, month in enumerate(_MONTHS, 1) if month.startswith(name[:3]))


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    following = date(year, month + 1, 1) + timedelta(days=31)
    last_day = (following.replace(day=1) - timedelta(days=1)).day
    return date(year, month + 1, min(day.day, last_day))


def _ordinal(day: int) -> str:
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"
