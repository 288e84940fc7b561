"""Plans for explicit commands, in the planner's step shape with the tool call spelled out.

"remind me to X at T" (productivity: reminders_add), "add X to my calendar on T"
(calendar_add, an hour long, or all day without a time), "note that ..." (notes_add),
"I spent 40 on groceries" (wealth: expense_record, the amount checked in the currency's
minor units; with no currency said or set, the currency is left open and the user picks it
when asked to approve), feedback and research as one step of their agent. Each plan step
goes through the planner's contract, so the existing approvals apply. A part of the day
("tomorrow morning") and a weekly or daily repetition are read by ``spoken_times``. A
command whose time is vague or unresolved, or that the grammar does not cover falls
through to the model's planner.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation

from shared.conversation.currencies import likely_currencies
from shared.models.domain import OpenArg, ToolCall
from shared.models.money import to_minor
from shared.understanding.hours import bare_hour
from shared.understanding.lexicon import CURRENCY_WORDS
from shared.understanding.nlp import pipeline
from shared.understanding.result import Label, Money, Plan, PlannedStep, TimeRef
from shared.understanding.spoken_times import Respoken, respoken, unread_repeat
from shared.understanding.times import Times, find_times

_POLITE = r"^(?:(?:please|hey|ok|okay)[,\s]+)?(?:(?:can|could|would|will) you\s+)?(?:please\s+)?"
_REMIND = re.compile(
    _POLITE + r"(?:remind me|set (?:me )?a reminder|add a reminder|remember(?=\s+to\b)"
    r"|(?:don'?t|do not) let me forget|make sure i (?:don'?t forget|remember))"
    r"\s+(?:to\s+|that\s+|about\s+)?"
    r"(?P<what>.+?)[\s.!?]*$",
    re.IGNORECASE,
)
_CALENDAR = re.compile(
    _POLITE + r"(?:add|put|enter|block)\s+(?P<what>.+?)\s+(?:to|in|into|on)\s+(?:my|the)\s+"
    r"(?:calendar|diary|agenda)[\s.!?]*$",
    re.IGNORECASE,
)
_NOTE = re.compile(
    _POLITE + r"(?:(?:make|take|add|save) a note(?: of| that)?|note(?: down)?(?: that)?|"
    r"write down(?: that)?|jot down(?: that)?)[:,]?\s+(?P<what>.+?)[\s.!]*$",
    re.IGNORECASE,
)
_CURRENCY = r"\$|€|£|chf|eur|usd|gbp|fr\.?|francs?|euros?|dollars?|bucks|pounds?"
_SPENT = re.compile(
    r"^(?:i\s+)?(?:just\s+|have\s+)?(?:spent|paid)\s+(?:(?P<pre>" + _CURRENCY + r")\s*)?"
    r"(?P<number>\d{1,7}(?:\.\d{1,3})?)(?:\s*(?P<post>" + _CURRENCY + r"))?\s+(?:on|for)\s+"
    r"(?P<what>[a-z][a-z &'-]{0,60}?)[\s.!]*$",
    re.IGNORECASE,
)
_LEFTOVER_TIME = re.compile(
    r"\b(at|on|by|around|before|after)\s+\d|\b\d{1,2}(:\d\d)?\s*(am|pm)\b|\b(tonight|tomorrow|"
    r"today|morning|afternoon|evening|later|soon|week|weekend|month|noon|o'clock)\b",
    re.IGNORECASE,
)
_DETERMINERS = re.compile(r"^(?:a|an|the|some|my|our)\s+", re.IGNORECASE)
_SECOND_REQUEST = re.compile(
    r"\b(?:and|then|also)\s+(?:note|remind|add|put|email|send|write|record|schedule|book|set|tell)\b",
    re.IGNORECASE,
)
_PREPOSITION = re.compile(r"\s+(?:for|with|at|from|in|to|on)\s+", re.IGNORECASE)
EVENT_LENGTH = timedelta(hours=1)  # what a calendar app gives an event with only a start
_SINGLE_STEP = {"feedback": "feedback", "research": "research"}
# A request that creates something but that the grammar above did not read (an ambiguous
# time, an unusual wording) is left to the model's planner; one that only asks ("what's on
# my calendar?", "how much did I spend?") goes to the label's agent as one step.
_CREATES: dict[Label, re.Pattern[str]] = {
    "schedule": re.compile(
        r"\b(remind|add|put|schedule|book|set|create|move|cancel|block|reschedule)\b", re.I
    ),
    "notes": re.compile(r"\b(note|notes|write|jot|save|keep)\b(?! down about)", re.I),
    "budget": re.compile(r"\b(spent|paid|log|record|set|bought|track)\b", re.I),
}  # an email is always written by the agent: no grammar reads one
_AGENT_OF: dict[Label, str] = {
    "schedule": "productivity", "notes": "productivity", "email": "productivity",
    "budget": "wealth",
}  # fmt: skip


def plan_command(
    label: Label,
    message: str,
    times: Times,
    now: datetime,
    currency: str | None,
    timezone: str = "UTC",
) -> Plan:
    text = message.strip()
    if label in _SINGLE_STEP:
        return _single(_SINGLE_STEP[label], text)
    read = read_command(label, text, times, now, currency, timezone)
    if read is not None:
        return read
    if label not in _AGENT_OF or _SECOND_REQUEST.search(text):
        return _no(f"no rule plans this {label} request")
    creates = _CREATES.get(label)
    if creates is not None and creates.search(text):
        return _no(f"a {label} request the grammar does not read")
    return _single(_AGENT_OF[label], text)


def asks_reminder(text: str) -> bool:
    """ "Remind me to ...", "don't let me forget to ...": a reminder, whether or not its time
    is read. Not "remind me of how many days off i had" (asks to be told now), nor a bare
    "remember to lock the doors", which may ask the assistant itself (CLINC150 train: a
    smart home's, a playlist's); with a time, it is read as a reminder (``read_command``)."""
    match = _REMIND.match(text)
    if match is None or re.match(_POLITE + r"remember\b", text, re.IGNORECASE):
        return False
    return text[: match.start("what")].rstrip().lower().endswith((" to", " that"))


def read_command(
    label: Label,
    text: str,
    times: Times,
    now: datetime,
    currency: str | None,
    timezone: str = "UTC",
) -> Plan | None:
    """The plan of a command the grammar reads whole (a reminder, a calendar entry, a note,
    an expense), or None. ``currency``: the user's, if set; ``timezone``: the user's, whose
    country's currency is offered first when an amount names none and none is set."""
    if label == "schedule":
        return _schedule(text, times, now, timezone)
    if times.unresolved:
        return None
    if label == "notes":
        return _note(text)
    if label == "budget":
        return _expense(text, times.resolved, now, currency, timezone)
    return None


def _schedule(text: str, times: Times, now: datetime, timezone: str) -> Plan | None:
    if unread_repeat(text):
        return None  # "every weekday at 7" made once would be wrong
    said = respoken(text, now, timezone)
    if said is not None:  # "tomorrow morning", "every Monday at 8": read as respoken
        again = find_times(pipeline()(said.text), now, timezone)
        return _repeating(_scheduled(said.text, again, now, timezone), said)
    return _scheduled(text, times, now, timezone)


def _scheduled(text: str, times: Times, now: datetime, timezone: str) -> Plan | None:
    at_an_hour = _reminder_at_an_hour(text, times, now, timezone)
    if at_an_hour is not None:
        return at_an_hour
    if times.unresolved:
        return None
    return (
        _reminder(text, times.resolved, now)
        or _reminder_on_a_day(text, times.resolved, now)
        or _event(text, times.resolved, now)
    )


def _repeating(plan: Plan | None, said: Respoken) -> Plan | None:
    """A reminder read from respoken words, with its repetition; anything else said with
    a repetition (a calendar entry every Monday) is left to the model."""
    if plan is None or not said.recurrence:
        return plan
    step = plan.steps[0] if len(plan.steps) == 1 else None
    call = step.call if step is not None else None
    if step is None or call is None or call.tool != "reminders_add":
        return None
    repeating = call.model_copy(update={"args": {**call.args, "recurrence": said.recurrence}})
    goal = f"{step.goal}, {said.every}"
    return plan.model_copy(
        update={"steps": [step.model_copy(update={"goal": goal, "call": repeating})]}
    )


def _no(reason: str) -> Plan:
    return Plan(decided=False, reason=reason)


def _single(agent: str, goal: str) -> Plan:
    return Plan(decided=True, steps=[PlannedStep(id="s1", agent=agent, goal=goal[:500])])


def _without(text: str, ref: TimeRef) -> str:
    """The message with the time expression (and a "for" before it) taken out."""
    before = re.sub(r"\s+(?:for|by)\s*$", "", text[: ref.start].rstrip(), flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", f"{before} {text[ref.end :].lstrip()}").strip()


def _one_time(times: list[TimeRef], now: datetime, clock: bool) -> TimeRef | None:
    if len(times) != 1 or (clock and not times[0].clock):
        return None
    return times[0] if times[0].at > now or not times[0].clock else None


def _reminder(text: str, times: list[TimeRef], now: datetime) -> Plan | None:
    ref = _one_time(times, now, clock=True)
    what = _reminded(_without(text, ref)) if ref else None
    if ref is None or what is None:
        return None
    goal = f'Add a reminder "{what}" for {_when(ref.at, clock=True)}'
    call = ToolCall(tool="reminders_add", args={"text": what, "due_at": ref.at.isoformat()})
    return Plan(
        decided=True, steps=[PlannedStep(id="s1", agent="productivity", goal=goal, call=call)]
    )


# A reminder said for a day with no time ("remind me to call mom on friday"): the user picks
# the hour when approving, from these (the ones still ahead), the first offered first.
DAY_HOURS = (9, 13, 18)


def _reminder_on_a_day(text: str, times: list[TimeRef], now: datetime) -> Plan | None:
    ref = _one_time(times, now, clock=False)
    what = _reminded(_without(text, ref)) if ref is not None and not ref.clock else None
    if ref is None or what is None:
        return None
    day = ref.at.replace(hour=0, minute=0, second=0, microsecond=0)
    choices = [at for h in DAY_HOURS if (at := day.replace(hour=h)) > now]
    if not choices:
        return None  # "today" in the evening: no hour of ours is left; the model asks
    args = {"text": what, "due_at": choices[0].isoformat()}
    open_hour = OpenArg(name="due_at", options=[at.isoformat() for at in choices])
    goal = f'Add a reminder "{what}" for {_when(day, clock=False)}'
    call = ToolCall(tool="reminders_add", args=args, open=open_hour)
    return Plan(
        decided=True, steps=[PlannedStep(id="s1", agent="productivity", goal=goal, call=call)]
    )


def _reminder_at_an_hour(text: str, times: Times, now: datetime, timezone: str) -> Plan | None:
    """ "remind me to X on Sunday at 11": the user picks 11:00 or 23:00 when approving."""
    read = bare_hour(text, times, now, timezone)
    what = _reminded(read.rest) if read else None
    if read is None or what is None:
        return None
    goal = f'Add a reminder "{what}"'
    if read.day is not None:
        goal += f" for {_when(read.day.at, clock=False)}"
    choices = [at.isoformat() for at in read.options]
    args = {"text": what, "due_at": choices[0]}
    if len(choices) > 1:
        call = ToolCall(
            tool="reminders_add", args=args, open=OpenArg(name="due_at", options=choices)
        )
    else:  # the other one has passed: nothing left to pick
        call = ToolCall(tool="reminders_add", args=args)
    return Plan(
        decided=True, steps=[PlannedStep(id="s1", agent="productivity", goal=goal, call=call)]
    )


def _reminded(rest: str) -> str | None:
    """What to be reminded of, from the message without its time; None if not a reminder."""
    match = _REMIND.match(rest)
    if match is None:
        return None
    what = match["what"].strip().rstrip(",;")
    if _LEFTOVER_TIME.search(what) or _SECOND_REQUEST.search(what) or not 1 <= len(what) <= 200:
        return None
    return what


def _event(text: str, times: list[TimeRef], now: datetime) -> Plan | None:
    ref = _one_time(times, now, clock=False)
    match = _CALENDAR.match(_without(text, ref)) if ref else None
    if ref is None or match is None:
        return None
    title = _DETERMINERS.sub("", match["what"].strip())
    if _LEFTOVER_TIME.search(title) or _SECOND_REQUEST.search(title) or not 1 <= len(title) <= 200:
        return None
    if ref.at.date() < now.astimezone(ref.at.tzinfo).date():
        return None
    start = ref.at
    end = start + EVENT_LENGTH if ref.clock else start + timedelta(days=1)
    args = {"title": title, "start": start.isoformat(), "end": end.isoformat()}
    step = PlannedStep(
        id="s1",
        agent="productivity",
        goal=f'Put "{title}" in the calendar for {_when(start, clock=ref.clock)}',
        call=ToolCall(tool="calendar_add", args=args),
    )
    return Plan(decided=True, steps=[step])


def _when(at: datetime, clock: bool) -> str:
    """How the user reads a time in a question about the plan: "Sun 22 Nov 2026, 10:00"
    (the user's zone; the call carries the exact ISO time)."""
    day = f"{at:%a} {at.day} {at:%b %Y}"
    return f"{day}, {at:%H:%M}" if clock else day


def _note(text: str) -> Plan | None:
    match = _NOTE.match(text)
    if match is None:
        return None
    body = match["what"].strip()
    title = body if len(body) <= 60 else " ".join(body.split()[:8]).rstrip(",;:") + "..."
    if not 1 <= len(body) <= 5000:
        return None
    step = PlannedStep(
        id="s1",
        agent="productivity",
        goal=f"Save a note: {body}"[:500],
        call=ToolCall(tool="notes_add", args={"title": title[:200], "text": body}),
    )
    return Plan(decided=True, steps=[step])


def _expense(
    text: str, times: list[TimeRef], now: datetime, fallback: str | None, timezone: str
) -> Plan | None:
    spent_at = times[0] if len(times) == 1 and not times[0].clock else None
    if len(times) > 1 or (times and spent_at is None):
        return None
    if spent_at is not None and spent_at.at.date() > now.astimezone(spent_at.at.tzinfo).date():
        return None  # a future expense is a plan, not a record
    match = _SPENT.match(_without(text, spent_at) if spent_at else text)
    if match is None:
        return None
    named = {CURRENCY_WORDS[m.lower()] for m in (match["pre"], match["post"]) if m}
    if len(named) > 1:
        return None
    known = named.pop() if named else fallback
    priced = _priced(match["number"], known, timezone)
    if priced is None:
        return None
    choices, minor = priced
    description = match["what"].strip()
    # The thing bought: "a new jacket" -> jacket, "a gift for my sister" -> gift.
    category = _PREPOSITION.split(_DETERMINERS.sub("", description))[0].split()[-1].lower()
    args = {"amount": match["number"], "category": category, "description": description}
    if known:
        args["currency"] = known
    if spent_at is not None:
        args["spent_at"] = spent_at.at.isoformat()
    amount_said = f"{match['number']} {known}" if known else match["number"]
    step = PlannedStep(
        id="s1",
        agent="wealth",
        goal=f"Record an expense of {amount_said} for {description}",
        call=ToolCall(
            tool="expense_record",
            args=args,
            open=None if known else OpenArg(name="currency", options=choices),
        ),
        money=Money(amount_minor=minor, currency=known) if known else None,
    )
    return Plan(decided=True, steps=[step])


def _priced(number: str, known: str | None, timezone: str) -> tuple[list[str], int] | None:
    """The currencies the amount may be in (the known one, or those the user may pick:
    ``OpenArg``) and its minor units in the first; None if no currency can hold it."""
    try:
        amount = Decimal(number)
        choices = [known] if known else likely_currencies(timezone, amount)
        return (choices, to_minor(amount, choices[0])) if choices else None
    except (InvalidOperation, ValueError):
        return None
