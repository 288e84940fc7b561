"""A known call with an argument left open (``OpenArg``: the currency of "I spent 42.50 on
groceries" when the user has set none) is approved by picking the value: the approval's
options are the values (``choose:CHF``), then "no" and "change it". The value picked fills
the call; a picked currency also becomes the profile's when it has none, so the next
expense is not asked about again (the question says so).
"""

from __future__ import annotations

from datetime import datetime

from shared.conversation.currencies import currency_label
from shared.conversation.phrases import phrase
from shared.graph.state import PlanStep
from shared.models.domain import OpenArg
from shared.models.wire import InterruptOption
from shared.services.context_cache import invalidate_context
from shared.services.memory.needs import MemoryPorts

CHOOSE = "choose:"


def question(open_arg: OpenArg, language: str, goal: str) -> tuple[str, list[InterruptOption]]:
    """The approval's question and its value options."""
    options = [
        InterruptOption(id=f"{CHOOSE}{value}", label=_label(open_arg.name, value))
        for value in open_arg.options
    ]
    return phrase(f"approve_{open_arg.name}", language, goal=goal), options


def picked(option_id: str | None) -> str | None:
    """The value an answer picked, or None when the option is no value (yes, no, edit)."""
    if option_id is None or not option_id.startswith(CHOOSE):
        return None
    return option_id.removeprefix(CHOOSE) or None


def filled(step: PlanStep, value: str) -> PlanStep:
    """The step with its call's open argument set; unchanged if it never offered ``value``."""
    call = step.call
    if call is None or call.open is None or value not in call.open.options:
        return step
    return step.model_copy(update={"call": call.completed(value)})


def remember(ports: MemoryPorts, user_id: str, asked: PlanStep, option_id: str | None) -> bool:
    """Keep a currency picked for ``asked`` as the profile's when it has none (True: kept).
    Repeating it (a replayed answer) changes nothing."""
    value, call = picked(option_id), asked.call
    if value is None or call is None or call.open is None or call.open.name != "currency":
        return False
    if value not in call.open.options:
        return False
    profile = ports.profiles.get_profile(user_id)
    if profile.currency is not None:
        return False
    now = ports.clock.now()
    ports.profiles.put_profile(
        user_id, profile.model_copy(update={"currency": value, "updated_at": now}), now
    )
    invalidate_context(ports.cache, user_id)
    return True


def _label(name: str, value: str) -> str:
    if name == "currency":
        return currency_label(value)
    if name == "due_at":  # in the user's zone (the value's own): "Sun 29 Nov, 23:00 (night)"
        at = datetime.fromisoformat(value)
        return f"{at:%a} {at.day} {at:%b}, {at:%H:%M} ({_part_of_day(at.hour)})"
    return value


def _part_of_day(hour: int) -> str:
    """A word that tells two readings of one hour apart, so typing it picks one."""
    if 5 <= hour < 12:
        return "morning"
    if 12 <= hour < 17:
        return "afternoon"
    return "evening" if 17 <= hour < 21 else "night"
