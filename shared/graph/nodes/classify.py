"""Intent classification: a deterministic fast path first, then one structured model call."""

from __future__ import annotations

import re

from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from shared.graph.context import TurnContext
from shared.graph.state import Accounting, Intent, TurnState
from shared.ports import ChatTurn, LLMRequest
from shared.services.structured import structured_with_retry

# A message that is only a greeting or thanks: certain enough to skip the model and memory.
_GREETING = re.compile(
    r"^\s*(hi|hello|hey|hallo|hoi|gr[üu]ezi|servus|bonjour|salut|ciao|hola|good (morning|"
    r"afternoon|evening)|guten (morgen|tag|abend)|thanks?( you)?( so much)?|thx|danke"
    r"( sch[öo]n)?|merci( beaucoup)?|grazie)\s*[!.?,:)]*\s*$",
    re.IGNORECASE,
)

_INSTRUCTIONS = (
    "Classify the user's message for a personal assistant. route: 'simple' for chat or a "
    "question answerable directly, 'complex' for work that needs tools or several steps "
    "(drafting, scheduling, researching, budgeting). Set has_extractable_facts when the "
    "message states something about the user or people they know worth remembering next "
    "week; has_preferences when it states a like/dislike/habit. entities: names or roles "
    "of people mentioned. language: ISO 639-1 code of the message."
)


class Classification(BaseModel):
    route: str = Field(pattern="^(simple|complex)$")
    has_extractable_facts: bool
    has_preferences: bool
    needs_semantic_retrieval: bool
    needs_temporal_retrieval: bool
    entities: list[str] = Field(max_length=8)
    language: str = Field(min_length=2, max_length=5)


def is_plain_greeting(text: str) -> bool:
    return bool(_GREETING.match(text))


def classify(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, object]:
    message = state.conversation.user_message
    if is_plain_greeting(message):
        return {"intent": Intent(route="greeting", fast_path=True), "nodes_run": ["classify"]}
    request = LLMRequest(
        system=_INSTRUCTIONS,
        messages=[ChatTurn(role="user", text=message)],
        max_output_tokens=256,
        temperature=0.0,
    )
    result, usage = structured_with_retry(runtime.context.llm, request, Classification)
    intent = Intent(
        route="complex" if result.route == "complex" else "simple",
        has_extractable_facts=result.has_extractable_facts,
        has_preferences=result.has_preferences,
        needs_semantic_retrieval=result.needs_semantic_retrieval,
        needs_temporal_retrieval=result.needs_temporal_retrieval,
        entities=result.entities,
    )
    conversation = state.conversation.model_copy(update={"language": result.language[:2]})
    return {
        "intent": intent,
        "conversation": conversation,
        "usage": [Accounting(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)],
        "nodes_run": ["classify"],
    }
