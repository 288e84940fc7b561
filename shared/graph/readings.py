"""A planned step that only reads the user's records (reminders, calendar, notes, expenses,
what was spent over some days) runs in the turn, and what it found is the reply, as found: reading
is not acting, so it is never asked about, and no model rephrases a list it could garble."""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any

from shared.agents.registry import TOOLS
from shared.agents.spec import ToolContext
from shared.graph.context import TurnContext
from shared.graph.state import PlanStep

_EMPTY = {
    "reminders_list": "You have no open reminders.",
    "calendar_list": "Nothing is on your calendar then.",
    "notes_search": "I found no note about that.",
    "expense_list": "No expenses are recorded for that month.",
}
_TITLES = {
    "reminders_list": "Your reminders:",
    "calendar_list": "On your calendar:",
    "notes_search": "Your notes:",
    "expense_list": "Your expenses:",
}


def reads_only(step: PlanStep) -> bool:
    call = step.call
    if call is None or call.open is not None or call.tool not in TOOLS:
        return False
    tool = TOOLS[call.tool]
    return not (tool.acts or tool.sensitive)


def read_now(context: TurnContext, step: PlanStep) -> str:
    """The step's call made now; what it found, said for the user."""
    assert step.call is not None
    tool = TOOLS[step.call.tool]
    args = tool.args_schema.model_validate(step.call.args)
    where = ToolContext(context.user_id, context.chat_id, context.turn_id, step.id, context.ports)
    return said(step.call.tool, json.loads(tool.run(where, args)))


def said(tool: str, found: dict[str, Any]) -> str:
    if tool == "month_summary":
        return f"You spent {found['total_spent']} {found['currency']} in {found['month']}."
    if tool == "spending_total":
        return _spent(found)
    items = next((v for v in found.values() if isinstance(v, list)), [])
    if not items:
        return _EMPTY.get(tool, "Nothing found.")
    return "\n".join([_TITLES.get(tool, "Found:"), *(f"- {_line(item)}" for item in items)])


def _spent(found: dict[str, Any]) -> str:
    """ "This week (Mon 23 - Sun 29 Nov) you recorded 3 expenses: 42.50 EUR." Each currency's
    total as recorded: none is converted, and none is assumed when nothing was."""
    first, last = date.fromisoformat(found["first_day"]), date.fromisoformat(found["last_day"])
    days = _days(first, last)
    period = found.get("period")
    window = f"{period} ({days})" if period else f"from {days.replace(' - ', ' to ')}"
    on = f" on {found['category']}" if found.get("category") else ""
    count = found["count"]
    if not count:
        return f"You haven't recorded any expenses{on} {window}."
    some = f"{'at least ' if found.get('truncated') else ''}{count} expense{'s' * (count != 1)}"
    totals = [f"{amount} {currency}" for currency, amount in found["totals"].items()]
    listed = " and ".join([", ".join(totals[:-1]), totals[-1]] if len(totals) > 1 else totals)
    return f"{window[:1].upper()}{window[1:]} you recorded {some}{on}: {listed}."


def _days(first: date, last: date) -> str:
    """ "Sat 28 Nov", "Mon 23 - Sun 29 Nov", "1 - 31 Mar", "1 Jan - 31 Dec 2025"."""
    span = (last - first).days
    if span == 0:
        return f"{_day(first, span)} {first:%b}"
    year = f" {last.year}" if span > 31 else ""
    if (first.year, first.month) == (last.year, last.month):
        return f"{_day(first, span)} - {_day(last, span)} {last:%b}{year}"
    return f"{_day(first, span)} {first:%b} - {_day(last, span)} {last:%b}{year}"


def _day(day: date, span: int) -> str:
    """The day of the month, after its weekday when the window is a week or less."""
    return f"{day:%a} {day.day}" if span < 7 else str(day.day)


def _line(item: dict[str, Any]) -> str:
    what = item.get("text") or item.get("title") or item.get("description") or ""
    if "amount" in item:
        what = f"{item['amount']} {item['currency']} {item.get('category', '')} {what}".strip()
    when = item.get("due_at") or item.get("start") or item.get("spent_at")
    if not when:
        return str(what)
    rule = item.get("recurrence") or ""
    return f"{what} ({_when(when)}{', ' + _repeats(rule) if rule else ''})"


_DAY_NAMES = {"MO": "Monday", "TU": "Tuesday", "WE": "Wednesday", "TH": "Thursday",
              "FR": "Friday", "SA": "Saturday", "SU": "Sunday"}  # fmt: skip


def _repeats(rule: str) -> str:
    """An RRULE in words where it is one of the plain ones, else "repeating"."""
    parts = dict(part.split("=", 1) for part in rule.upper().split(";") if "=" in part)
    if parts == {"FREQ": "DAILY"}:
        return "every day"
    if parts.keys() == {"FREQ", "BYDAY"} and parts["FREQ"] == "WEEKLY":
        day = _DAY_NAMES.get(parts["BYDAY"])
        if day is not None:
            return f"every {day}"
    return "repeating"


def _when(iso: str) -> str:
    at = datetime.fromisoformat(iso)
    return at.strftime("%a %d %b %Y, %H:%M")
