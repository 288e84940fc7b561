"""Plans of explicit commands: the planner's step shape, a tool call its schema accepts, and
money checked in minor units; whatever is vague falls through to the planner."""

from __future__ import annotations

from decimal import Decimal

import pytest
from spacy.language import Language

from shared.agents.registry import AGENTS, tool
from shared.graph.state import PlanStep
from shared.models.money import to_minor
from shared.understanding.plans import plan_command
from shared.understanding.result import Label, Plan
from shared.understanding.times import find_times
from tests.unit.understanding.conftest import NOW, ZONE


def plan(nlp: Language, label: Label, text: str, currency: str | None = "CHF") -> Plan:
    return plan_command(label, text, find_times(nlp(text), NOW, ZONE), NOW, currency, ZONE)


def only_call(result: Plan) -> tuple[str, dict[str, str]]:
    assert result.decided, result.reason
    (step,) = result.steps
    assert step.call is not None
    assert step.agent in AGENTS
    PlanStep(id=step.id, agent=step.agent, inputs={"goal": step.goal}, call=step.call)
    tool(step.call.tool).args_schema.model_validate(step.call.args)
    return step.call.tool, step.call.args


@pytest.mark.parametrize(
    ("text", "what", "due"),
    [
        (
            "Remind me to call my mother Maria tomorrow at 10am",
            "call my mother Maria",
            "2026-11-22T10:00:00+01:00",
        ),
        (
            "Remind me tomorrow at 8am to take out the recycling.",
            "take out the recycling",
            "2026-11-22T08:00:00+01:00",
        ),
        (
            "Can you remind me on Monday at 9:30 am to send the invoice?",
            "send the invoice",
            "2026-11-23T09:30:00+01:00",
        ),
        (
            "Set a reminder for Friday at noon to book the restaurant.",
            "book the restaurant",
            "2026-11-27T12:00:00+01:00",
        ),
    ],
)
def test_reminders(nlp: Language, text: str, what: str, due: str) -> None:
    assert only_call(plan(nlp, "schedule", text)) == (
        "reminders_add",
        {"text": what, "due_at": due},
    )


@pytest.mark.parametrize(
    ("text", "what", "hours"),
    [
        ("remind me to call mom on friday", "call mom", ["2026-11-27T09", "T13", "T18"]),
        ("Remind me to pay rent on December 1st", "pay rent", ["2026-12-01T09", "T13", "T18"]),
        # 13:00 in Zurich now: the morning has passed
        ("remind me to water the plants today", "water the plants", ["2026-11-21T18"]),
    ],
)
def test_a_reminder_for_a_day_asks_the_hour(
    nlp: Language, text: str, what: str, hours: list[str]
) -> None:
    """No time said: the user picks one of the day's hours still ahead when approving."""
    result = plan(nlp, "schedule", text)
    (step,) = result.steps
    assert step.call is not None and step.call.open is not None
    assert step.call.args["text"] == what
    day = hours[0][:10]
    wanted = [day + h[-4:] if h.startswith("T") else h for h in hours]
    assert [o[:13] for o in step.call.open.options] == wanted
    for call in step.call.completions():  # whichever is picked, the tool accepts the call
        tool(call.tool).args_schema.model_validate(call.args)


def test_a_day_with_no_hour_left_is_left_to_the_model(nlp: Language) -> None:
    late = "remind me to call mom today"
    evening = NOW.replace(hour=18)  # 19:00 in Zurich
    result = plan_command(
        "schedule", late, find_times(nlp(late), evening, ZONE), evening, "CHF", ZONE
    )
    assert not result.decided


def test_a_calendar_entry_lasts_an_hour_or_the_whole_day(nlp: Language) -> None:
    name, args = only_call(
        plan(nlp, "schedule", "Add dinner with Lisa to my calendar on Friday at 7pm.")
    )
    assert (name, args["title"], args["start"], args["end"]) == (
        "calendar_add", "dinner with Lisa", "2026-11-27T19:00:00+01:00", "2026-11-27T20:00:00+01:00"
    )  # fmt: skip
    _, whole_day = only_call(
        plan(nlp, "schedule", "Put the school concert in my calendar on December 3.")
    )
    assert (whole_day["start"], whole_day["end"]) == (
        "2026-12-03T00:00:00+01:00",
        "2026-12-04T00:00:00+01:00",
    )


def test_notes(nlp: Language) -> None:
    name, args = only_call(plan(nlp, "notes", "Note that the spare key is under the mat."))
    assert (name, args["text"]) == ("notes_add", "the spare key is under the mat")


@pytest.mark.parametrize(
    ("text", "amount", "currency", "category"),
    [
        ("I spent 42.50 on groceries", "42.50", "CHF", "groceries"),
        ("spent 60 euros on a new jacket", "60", "EUR", "jacket"),
        ("I paid $12 for parking.", "12", "USD", "parking"),
    ],
)
def test_expenses_in_minor_units(
    nlp: Language, text: str, amount: str, currency: str, category: str
) -> None:
    result = plan(nlp, "budget", text)
    name, args = only_call(result)
    assert (name, args["amount"], args["currency"], args["category"]) == (
        "expense_record",
        amount,
        currency,
        category,
    )
    money = result.steps[0].money
    assert money is not None
    assert (money.amount_minor, money.currency) == (to_minor(Decimal(amount), currency), currency)


def test_an_expense_yesterday_is_dated(nlp: Language) -> None:
    _, args = only_call(plan(nlp, "budget", "Yesterday I spent 35 francs on petrol."))
    assert args["spent_at"] == "2026-11-20T00:00:00+01:00"


@pytest.mark.parametrize(
    ("label", "text"),
    [
        ("schedule", "Remind me tonight to go out, or maybe tomorrow"),  # which one?
        ("schedule", "Remind me on the 5th to pay the rent."),
        ("schedule", "Put my flight to London on 3/4 in my calendar"),  # day or month first?
        ("schedule", "Remind me to call Anna and note that she likes tulips, tomorrow at 9am"),
        ("schedule", "Move my meeting with Tom to Thursday."),
        ("budget", "I spent 12,50 on coffee."),  # a decimal comma or a thousands one?
        ("budget", "I spent 12.345 on coffee."),  # more decimals than francs have
        ("budget", "Set my grocery budget to 500 a month."),
    ],
)
def test_what_the_grammar_cannot_vouch_for_falls_through(
    nlp: Language, label: Label, text: str
) -> None:
    result = plan(nlp, label, text)
    assert not result.decided
    assert result.reason


def test_an_amount_without_a_currency_leaves_it_for_the_user_to_pick(nlp: Language) -> None:
    result = plan(nlp, "budget", "I spent 40 on groceries", currency=None)
    (step,) = result.steps
    assert step.call is not None and "currency" not in step.call.args
    assert step.call.open is not None and step.call.open.name == "currency"
    assert step.call.open.options[0] == "CHF"  # Zurich's; then the most traded
    for call in step.call.completions():  # whichever is picked, the tool accepts the call
        tool(call.tool).args_schema.model_validate(call.args)
    assert step.money is None and "CHF" not in step.goal


def test_no_currency_is_offered_that_cannot_hold_the_amount(nlp: Language) -> None:
    text = "I spent 42.50 on sushi"
    result = plan_command("budget", text, find_times(nlp(text), NOW, ZONE), NOW, None, "Asia/Tokyo")
    (step,) = result.steps
    assert step.call is not None and step.call.open is not None
    assert "JPY" not in step.call.open.options  # yen have no decimals
    assert not plan(nlp, "budget", "I spent 12.345 on coffee.", currency=None).decided


@pytest.mark.parametrize(
    ("label", "text", "agent"),
    [
        ("research", "Find me a good Thai restaurant near the station.", "research"),
        ("feedback", "Your last answer was completely wrong.", "feedback"),
        ("email", "Write an email to Tom about the project delay.", "productivity"),
        ("schedule", "What's on my calendar for Monday?", "productivity"),
        ("budget", "How much did I spend on restaurants this month?", "wealth"),
    ],
)
def test_other_requests_are_one_step_of_their_agent(
    nlp: Language, label: Label, text: str, agent: str
) -> None:
    result = plan(nlp, label, text)
    assert result.decided
    (step,) = result.steps
    assert (step.agent, step.goal, step.call) == (agent, text, None)
    assert AGENTS[step.agent].plannable
