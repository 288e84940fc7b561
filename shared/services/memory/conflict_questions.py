"""A new fact contradicts a stored one and the fact system cannot decide: ask the user.

The conflict is held as a ``fact_conflict`` pending item (nothing is overwritten); this puts
it to the user in the chat it came from, as an interrupt answered through
``functions/resume`` (keep the old, take the new, keep both). Only when the chat waits on
nothing else: one question at a time; the others stay answerable in the memory settings.
"""

from __future__ import annotations

from typing import Protocol

from shared.conversation.phrases import phrase
from shared.errors import NotFound
from shared.models.domain import ExtractionTask
from shared.models.memory import PendingItem
from shared.models.memory_api import CONFLICT_CHOICES
from shared.models.wire import Interrupt, InterruptOption
from shared.ports import Clock, ConversationStore, FactStore, ProfileStore
from shared.services.questions import ask_on_chat, waiting_on


class ConflictPorts(Protocol):
    """What asking about a conflict reads (the facts, the user's language) and writes."""

    @property
    def facts(self) -> FactStore: ...
    @property
    def profiles(self) -> ProfileStore: ...
    @property
    def conversations(self) -> ConversationStore: ...
    @property
    def clock(self) -> Clock: ...


def ask_about_conflict(deps: ConflictPorts, task: ExtractionTask, items: list[PendingItem]) -> bool:
    """Ask about the first conflict; False if none, or if the chat waits on another question."""
    conflict = next((i for i in items if i.kind == "fact_conflict" and i.facts), None)
    if conflict is None or conflict.conflicting_fact_id is None:
        return False
    old = deps.facts.get_fact(task.user_id, conflict.conflicting_fact_id)
    if old is None:
        return False
    language = deps.profiles.get_profile(task.user_id).language or "en"
    interrupt = Interrupt(
        id=f"conflict-{conflict.id}",
        kind="fact_conflict",
        question=phrase("conflict", language, old=old.text, new=conflict.facts[0].text),
        options=[InterruptOption(id=c, label=phrase(c, language)) for c in CONFLICT_CHOICES],
    )
    control = waiting_on(interrupt, "pending_item", conflict.id, deps.clock.now())
    try:
        return ask_on_chat(
            deps.conversations,
            task.user_id,
            task.chat_id,
            control,
            f"{interrupt.id}-q",
            task.turn_id,
        )
    except NotFound:  # the chat was deleted meanwhile: the item stays in the settings
        return False
