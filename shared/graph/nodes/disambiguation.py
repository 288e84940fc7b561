"""Stage 5, disambiguation: which of the user's people a name means.

Blocking: the answer depends on the person, so the turn asks first; the question, the
message, its intent and its deferred extraction become the chat's pending question and
the turn ends there (HITL text). Non-blocking: the turn answers now, appends "by the way,
which X did you mean?" and remembers the question; the fact system meanwhile holds the
facts it could not attribute, and the user's answer settles them.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime

from shared.conversation.answers import SOMEONE_ELSE
from shared.conversation.phrases import phrase
from shared.graph.context import TurnContext
from shared.graph.instrument import node
from shared.graph.questions import ask
from shared.graph.routing import route_ambiguity
from shared.graph.state import Ambiguity, Disambiguation, Hitl, TurnState
from shared.models.wire import Interrupt, InterruptOption


def question_for(ambiguity: Ambiguity, language: str, interrupt_id: str) -> Interrupt:
    options = [InterruptOption(id=c.person_id, label=c.label) for c in ambiguity.candidates]
    options.append(InterruptOption(id=SOMEONE_ELSE, label=phrase("someone_else", language)))
    return Interrupt(
        id=interrupt_id,
        kind="disambiguation",
        question=phrase("which", language, name=ambiguity.mention),
        options=options,
    )


def _ask(state: TurnState, context: TurnContext, ambiguity: Ambiguity, blocking: bool) -> Hitl:
    interrupt = question_for(ambiguity, state.conversation.language, f"{context.turn_id}-q")
    return ask(
        state,
        context,
        interrupt,
        blocking,
        mention=ambiguity.mention,
        resolved=state.memory.resolved,
        extraction=state.memory.extraction,  # a "by the way" answer may come before it ran
    )


@node("disambiguation_blocking")
def disambiguation_blocking(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    ambiguity = state.memory.ambiguous[0]
    return {
        "disambiguation": Disambiguation(blocking=ambiguity),
        "hitl": _ask(state, runtime.context, ambiguity, blocking=True),
    }


@node("disambiguation_simple")
def disambiguation_simple(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    ambiguity = state.memory.ambiguous[0]
    return {
        "disambiguation": Disambiguation(followup=ambiguity),
        "hitl": _ask(state, runtime.context, ambiguity, blocking=False),
    }


def build(checkpointer: bool | None = False) -> Any:
    """``checkpointer=False``: the turn's thread is checkpointed by the parent graph only."""
    graph = StateGraph(TurnState, context_schema=TurnContext)
    graph.add_node("disambiguation_blocking", disambiguation_blocking)
    graph.add_node("disambiguation_simple", disambiguation_simple)
    graph.add_conditional_edges(
        START, route_ambiguity, ["disambiguation_blocking", "disambiguation_simple", "__end__"]
    )
    graph.add_edge("disambiguation_blocking", "__end__")
    graph.add_edge("disambiguation_simple", "__end__")
    return graph.compile(name="disambiguation", checkpointer=checkpointer)
