"""Stage 3, intent classification: deterministic first, else one structured call.

A plain greeting is answered by rule. Any other message is read by the understanding tier
(``shared.graph.understood``): when it settles the intent, no model is called; otherwise
one structured call (beside it, the memory the tier's reading suggests and the reply made
with it: see ``shared.graph.early_reply``) returns the route, the people mentioned (name
and role), time references, the language and the optimisation flags that let later stages
skip work, and what the tier was sure of (route, people, times, facts) is kept over it.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from shared.conversation.greetings import greeting_language, is_plain_greeting
from shared.errors import ModelOutputInvalid
from shared.graph import early_reply, understood
from shared.graph.context import TurnContext
from shared.graph.instrument import node
from shared.graph.nodes import memory
from shared.graph.state import Conversation, EntityRef, Intent, TurnState
from shared.models.base import NO_TRIM
from shared.ports import ChatTurn, LLMRequest
from shared.services.structured import structured_with_retry

CONTEXT_MESSAGES = 4  # recent messages shown, so "what about him?" can be read
_INSTRUCTIONS = (
    "Classify the user's last message for a personal assistant. route: 'simple' for chat "
    "or a question answerable directly, 'complex' for work that needs tools or several "
    "steps (drafting, scheduling, researching, budgeting). entities: people the message "
    "mentions, with name (as written) and role (e.g. 'brother', 'boss', null if none). "
    "temporal_references: time expressions as written ('next week'). "
    "has_extractable_facts: it states something about the user or people they know worth "
    "remembering; has_preferences: a like, dislike or habit; needs_semantic_retrieval: the "
    "answer needs what the assistant knows about the user or those people; "
    "needs_temporal_retrieval: it asks about plans or events in a time span. "
    "language: ISO 639-1 code of the message."
)


class MentionedEntity(BaseModel):
    name: str = Field(min_length=1, max_length=80)
    role: str | None = Field(default=None, max_length=40)


class Classification(BaseModel):
    route: Literal["simple", "complex"]  # an enum: Gemini does not enforce a pattern
    entities: list[MentionedEntity] = Field(default_factory=list, max_length=8)
    temporal_references: list[str] = Field(default_factory=list, max_length=4)
    has_extractable_facts: bool
    has_preferences: bool
    needs_semantic_retrieval: bool
    needs_temporal_retrieval: bool
    language: str = Field(min_length=2, max_length=5, json_schema_extra={NO_TRIM: True})


@node("classify")
def classify(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    message = state.conversation.user_message
    if is_plain_greeting(message):
        return {
            "intent": Intent(route="greeting", fast_path=True, decided_by="rule"),
            "conversation": Conversation(language=greeting_language(message)),
        }
    reading = understood.read(runtime.context, state)
    settings = runtime.context.ports.settings
    if reading is not None and reading.settled:
        intent = understood.settled_intent(reading)
        said = greeting_language(message) if intent.route == "greeting" else reading.language
        language = state.conversation.profile.language or said or "en"
        intent = understood.within_reach(intent, settings)
        return {"intent": intent, "conversation": Conversation(language=language)}
    guess = early_reply.start(runtime.context, state, reading, memory.EARLY)
    try:
        intent, language = _by_model(state, runtime)
    except ModelOutputInvalid:
        early_reply.abandon(runtime.context, guess)
        if reading is None:
            raise
        # a model that cannot fill the schema twice is no reason to fail the turn: what the
        # tier read (route guess, people, times) carries it, and the reply says what it can
        intent = understood.within_reach(understood.unsure_intent(reading), settings)
        language = state.conversation.profile.language or reading.language or "en"
        return {"intent": intent, "conversation": Conversation(language=language)}
    except BaseException:
        early_reply.abandon(runtime.context, guess)
        raise
    if reading is not None:
        intent = understood.within_reach(understood.merged_intent(intent, reading), settings)
    conversation = Conversation(language=language)
    if guess is not None:
        guess.settle()
        if not early_reply.agrees(intent, conversation, guess):
            runtime.context.speculation.drop()  # a wrong guess: never shown, never stored
    return {"intent": intent, "conversation": conversation}


def _by_model(state: TurnState, runtime: Runtime[TurnContext]) -> tuple[Intent, str]:
    message = state.conversation.user_message
    recent = state.conversation.history[-CONTEXT_MESSAGES:]
    context = "\n".join(f"{m.role}: {m.text}" for m in recent)
    request = LLMRequest(
        kind="routing",
        system=_INSTRUCTIONS + (f"\n\nRecent conversation:\n{context}" if context else ""),
        messages=[ChatTurn(role="user", text=message)],
        max_output_tokens=300,
        temperature=0.0,
    )
    result, _ = structured_with_retry(runtime.context.llm, request, Classification)
    intent = Intent(
        route="complex" if result.route == "complex" else "simple",
        entities=[EntityRef(name=e.name.strip(), role=e.role) for e in result.entities],
        temporal_references=[t.strip() for t in result.temporal_references if t.strip()],
        has_extractable_facts=result.has_extractable_facts,
        has_preferences=result.has_preferences,
        needs_semantic_retrieval=result.needs_semantic_retrieval,
        needs_temporal_retrieval=result.needs_temporal_retrieval,
    )
    return intent, state.conversation.profile.language or result.language[:2].lower()


def build(checkpointer: bool | None = False) -> Any:
    """``checkpointer=False``: the turn's thread is checkpointed by the parent graph only."""
    graph = StateGraph(TurnState, context_schema=TurnContext)
    graph.add_node("classify", classify)
    graph.add_edge(START, "classify")
    graph.add_edge("classify", "__end__")
    return graph.compile(name="classification", checkpointer=checkpointer)
