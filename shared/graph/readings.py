"""A planned step that only reads the user's records (reminders, calendar, notes, expenses,
the month's spending) runs in the turn, and what it found is the reply, as found: reading
is not acting, so it is never asked about, and no model rephrases a list it could garble."""

from __future__ import annotations

import json
from datetime import datetime
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
    items = next((v for v in found.values() if isinstance(v, list)), [])
    if not items:
        return _EMPTY.get(tool, "Nothing found.")
    return "\n".join([_TITLES.get(tool, "Found:"), *(f"- {_line(item)}" for item in items)])


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
