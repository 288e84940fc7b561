"""Requests to read the user's records: "what are my reminders", "what's on my calendar this
week", "what did I note about the boiler", "list my expenses", "how much did i spend this wk"
(``understanding.spending``: any window, totals as recorded). Each is one step of its agent
with the read call spelled out; a call that only reads is never asked about
(``shared.services.hitl.call_needs_approval``), whatever the trust.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from shared.models.domain import ToolCall
from shared.understanding.result import Label, Plan, PlannedStep
from shared.understanding.spending import spending_asked

_ASK = (
    r"^(?:(?:please|hey|ok|okay)[,\s]+)?(?:(?:can|could) you\s+)?(?:please\s+)?"
    r"(?:what(?:'s| is| are)?|whats|show(?: me)?|list|tell me|read(?: me)?|give me|do i have"
    r"|have i got|any)\s+"
)
_REMINDERS = re.compile(
    _ASK + r"(?:all\s+)?(?:my|the|any)?\s*(?:open\s+)?reminders\b[\s?.!]*$", re.I
)
_EVENTS = re.compile(
    _ASK + r"(?:on\s+)?(?:my|the|any)?\s*(?:calendar|agenda|events?|appointments?|meetings?)"
    r"(?:\s+(?:for\s+)?(?P<when>today|tomorrow|this week|next week))?[\s?.!]*$",
    re.I,
)
_NOTE_ABOUT = re.compile(
    r"^(?:what did i (?:note|write down|jot down)|(?:show|find)(?: me)? (?:my )?notes?)"
    r" (?:about|on) (?P<query>[\w' -]{1,80}?)[\s?.!]*$",
    re.I,
)
_EXPENSES = re.compile(
    _ASK + r"(?:my|the)?\s*expenses(?:\s+(?:from|for|of)?\s*(?P<month>this month|last month))?"
    r"[\s?.!]*$",
    re.I,
)
_WINDOWS = {"today": (0, 1), "tomorrow": (1, 1), "this week": (0, 7), "next week": (7, 7)}


def read_listing(text: str, now: datetime, timezone: str) -> tuple[Label, Plan] | None:
    """The label and the one-step plan of a request that only reads, or None."""
    said = text.strip()
    if _REMINDERS.match(said):
        return "schedule", _step("productivity", said, "reminders_list", {})
    if match := _EVENTS.match(said):
        start_day, days = _WINDOWS[(match["when"] or "this week").casefold()]
        local = now.astimezone(ZoneInfo(timezone))
        midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
        start = midnight + timedelta(days=start_day) if start_day or match["when"] else local
        end = midnight + timedelta(days=start_day + days)
        args = {"start": start.isoformat(), "end": end.isoformat()}
        return "schedule", _step("productivity", said, "calendar_list", args)
    if match := _NOTE_ABOUT.match(said):
        return "notes", _step("productivity", said, "notes_search", {"query": match["query"]})
    if match := _EXPENSES.match(said):
        args = {"month": _month(now, timezone, match["month"])}
        return "budget", _step("wealth", said, "expense_list", args)
    if asked := spending_asked(said, now, timezone):
        window = asked.window
        args = {"first_day": window.first.isoformat(), "last_day": window.last.isoformat()}
        args["period"] = window.words
        if asked.category is not None:
            args["category"] = asked.category
        return "budget", _step("wealth", said, "spending_total", args)
    return None


def _month(now: datetime, timezone: str, which: str | None) -> str:
    local = now.astimezone(ZoneInfo(timezone))
    if which and which.casefold() == "last month":
        local = local.replace(day=1) - timedelta(days=1)
    return f"{local.year:04d}-{local.month:02d}"


def _step(agent: str, goal: str, tool: str, args: dict[str, str]) -> Plan:
    call = ToolCall(tool=tool, args=args)
    step = PlannedStep(id="s1", agent=agent, goal=goal[:500], call=call)
    return Plan(decided=True, steps=[step])
