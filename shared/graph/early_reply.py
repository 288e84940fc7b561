"""When the classify node starts a speculative reply (``speculation``), and when it keeps it.

It starts one for a message the tier leaves open (its route undecided) that names no person,
no time and no group of people: what plain chat looks like before the model has classified
it. It keeps it when the classification agrees: the simple route, no people, no retrieval,
no plan, the language it was started in. The response node still takes it only if its own
request is the speculated one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.graph.context import TurnContext
from shared.graph.reply_prompt import PER_ENTITY, reply_request, system_prompt
from shared.graph.state import Conversation, Intent, MemoryState, TurnState

if TYPE_CHECKING:
    from shared.understanding import Understanding


def leans_simple(reading: Understanding) -> bool:
    return (
        not reading.route.decided
        and reading.people.decided
        and not reading.people.mentions
        and not reading.times
        and not reading.spans
        and not reading.about_roles
    )


def start(context: TurnContext, state: TurnState, reading: Understanding | None) -> str | None:
    """Start the reply the simple path would make; the language it answers in, or None."""
    if not context.ports.settings.speculative_reply or reading is None:
        return None
    if not leans_simple(reading):
        return None
    conversation = state.conversation
    language = conversation.profile.language or reading.language or "en"
    # What the memory stage assembles for a turn that retrieves nothing: the user's own facts.
    facts = {"user": conversation.profile_facts[:PER_ENTITY]} if conversation.profile_facts else {}
    guess = state.model_copy(
        update={
            "conversation": conversation.model_copy(update={"language": language}),
            "memory": MemoryState(facts_by_entity=facts),
        }
    )
    request = reply_request(guess, system_prompt(guess), conversation.focus)
    context.speculation.start(context.llm, request)
    return language


def agrees(intent: Intent, conversation: Conversation, language: str) -> bool:
    return (
        intent.route == "simple"
        and not intent.entities
        and not intent.needs_semantic_retrieval
        and not intent.needs_temporal_retrieval
        and not intent.planned
        and conversation.language == language
    )
