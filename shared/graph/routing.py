"""Pure routing functions: state in, next node (or stage) out. Property-tested.

Stages are subgraphs; the parent graph's edges between them use the ``after_*`` functions,
each stage's inner edges the others.
"""

from __future__ import annotations

from typing import Literal

from shared.conversation.greetings import is_plain_greeting
from shared.graph.state import Intent, TurnState

End = Literal["__end__"]
END: End = "__end__"  # langgraph's END, typed as a literal for the routing signatures

MAX_PLAN_STEPS = 5


# -- 1. entry ---------------------------------------------------------------------------------
def after_session_init(state: TurnState) -> Literal["summarize", "context_loader"] | End:
    """A plain greeting needs neither the summary nor the context: straight on."""
    if is_plain_greeting(state.conversation.user_message):
        return END
    return "summarize" if state.conversation.needs_summary else "context_loader"


# -- 2. HITL ----------------------------------------------------------------------------------
def after_hitl_handler(state: TurnState) -> Literal["resolve_disambiguation"] | End:
    pending = state.hitl.pending
    if state.hitl.outcome == "answered" and pending and pending.interrupt.kind == "disambiguation":
        return "resolve_disambiguation"
    return END


def after_hitl(state: TurnState) -> Literal["classification", "memory", "planning", "response"]:
    """Resume routing: a disambiguation answer continues at the memory pipeline with the
    person fixed (a "by the way" answer is only acknowledged), an approval at agent
    execution, a question kept to be asked again at the response; anything else is a new
    message."""
    pending = state.hitl.pending
    if state.hitl.outcome == "answered" and pending is not None:
        if pending.interrupt.kind == "approval":
            return "planning"
        if pending.interrupt.kind == "disambiguation":
            return "memory" if pending.blocking else "response"
    if state.hitl.outcome == "kept" and state.hitl.ask is not None:  # the question, again
        return "response"
    return "classification"


# -- 3. classification ------------------------------------------------------------------------
def after_classification(state: TurnState) -> Literal["memory", "response"]:
    return "response" if _route(state.intent) == "greeting" else "memory"


# -- 4. memory --------------------------------------------------------------------------------
def route_retrieval(
    state: TurnState,
) -> list[Literal["semantic_retrieval", "temporal_retrieval", "memory_assembly"]]:
    """Skip, semantic only, or semantic and temporal in parallel."""
    intent = state.intent
    if intent is None:
        return ["memory_assembly"]
    if intent.needs_temporal_retrieval:
        return ["semantic_retrieval", "temporal_retrieval"]
    if intent.needs_semantic_retrieval or any(r.person_id for r in state.memory.resolved):
        return ["semantic_retrieval"]
    return ["memory_assembly"]


def ambiguity_blocks(intent: Intent | None) -> bool:
    """The answer depends on who is meant (a question about them, or work for them): ask
    first. A statement can be answered now and asked about "by the way"."""
    if intent is None:
        return False
    return (
        intent.route == "complex"
        or intent.needs_semantic_retrieval
        or intent.needs_temporal_retrieval
    )


# -- 5. disambiguation ------------------------------------------------------------------------
def route_ambiguity(
    state: TurnState,
) -> Literal["disambiguation_blocking", "disambiguation_simple"] | End:
    if not state.memory.ambiguous:
        return END
    return "disambiguation_blocking" if ambiguity_blocks(state.intent) else "disambiguation_simple"


def after_disambiguation(state: TurnState) -> Literal["planning", "response"]:
    if state.disambiguation.blocking is not None:
        return "response"
    return "planning" if _route(state.intent) == "complex" else "response"


# -- 6. planning ------------------------------------------------------------------------------
def planning_entry(state: TurnState) -> Literal["global_planner", "agent_execution"]:
    return "agent_execution" if state.hitl.outcome == "answered" else "global_planner"


def next_step_ids(state: TurnState) -> list[str]:
    """Steps not yet handled whose dependencies are all handled, in plan order."""
    handled = {r.step_id for r in state.planning.results}
    return [
        step.id
        for step in state.planning.steps
        if step.id not in handled and all(d in handled for d in step.depends_on)
    ]


def more_steps(state: TurnState) -> Literal["agent_execution"] | End:
    """Loop while a step is ready and nothing waits for the user's approval."""
    if state.hitl.ask is not None or not next_step_ids(state):
        return END
    return "agent_execution"


# -- 7. response ------------------------------------------------------------------------------
def ui_route(
    state: TurnState,
) -> Literal["greeting_text", "hitl_text", "complex_text", "simple_text"]:
    """HITL text asks a new blocking question or acknowledges a "by the way" answer."""
    hitl = state.hitl
    if hitl.ask is not None and hitl.ask.blocking:
        return "hitl_text"
    if hitl.outcome == "answered" and hitl.pending is not None and not hitl.pending.blocking:
        return "hitl_text"
    route = _route(state.intent)
    if route == "greeting":
        return "greeting_text"
    return "complex_text" if route == "complex" and state.planning.steps else "simple_text"


def after_response(state: TurnState) -> Literal["await_answer"] | End:
    """A question asked (or kept, by a greeting in between) pauses the thread for it."""
    hitl = state.hitl
    if hitl.ask is not None or (hitl.outcome == "kept" and hitl.pending is not None):
        return "await_answer"
    return END


def _route(intent: Intent | None) -> str:
    return "simple" if intent is None else intent.route
