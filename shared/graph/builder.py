"""Wiring of the Global Supervisor: seven stage subgraphs and the routes between them.

A turn that asks the user ends in ``await_answer``, which pauses the thread; the answer
resumes it there and runs as the next turn (from ``entry``) on the same thread.

Stages live in ``nodes/`` (one module each, with its subgraph builder); routing decisions in
``routing.py``. ``docs/graph.md`` is generated from this graph (``make graph``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from shared.graph.context import TurnContext
from shared.graph.nodes import (
    classification,
    disambiguation,
    entry,
    hitl,
    memory,
    planning,
    response,
)
from shared.graph.nodes.waiting import await_answer
from shared.graph.routing import (
    after_classification,
    after_disambiguation,
    after_hitl,
    after_response,
)
from shared.graph.state import TurnState


@lru_cache(maxsize=1)
def build_turn_graph() -> CompiledStateGraph[TurnState, TurnContext, TurnState, TurnState]:
    return wire(stage_checkpointer=False)


def wire(
    stage_checkpointer: bool | None,
) -> CompiledStateGraph[TurnState, TurnContext, TurnState, TurnState]:
    """``stage_checkpointer``: False in production (a stage would read its own checkpoint
    on every run for nothing); None only to draw the stages inside (``make graph``)."""
    graph = StateGraph(TurnState, context_schema=TurnContext)
    stages = (entry, hitl, classification, memory, disambiguation, planning, response)
    for stage in stages:
        graph.add_node(stage.__name__.rsplit(".", 1)[-1], stage.build(stage_checkpointer))
    graph.add_node("await_answer", await_answer)
    graph.add_edge(START, "entry")
    graph.add_edge("entry", "hitl")
    graph.add_conditional_edges(
        "hitl", after_hitl, ["classification", "memory", "planning", "response"]
    )
    graph.add_conditional_edges("classification", after_classification, ["memory", "response"])
    graph.add_edge("memory", "disambiguation")
    graph.add_conditional_edges("disambiguation", after_disambiguation, ["planning", "response"])
    graph.add_edge("planning", "response")
    graph.add_conditional_edges("response", after_response, ["await_answer", END])
    graph.add_edge("await_answer", "entry")  # the answer is the next turn on this thread
    return graph.compile(name="global_supervisor")


def checkpointed(
    graph: CompiledStateGraph[TurnState, TurnContext, TurnState, TurnState],
    checkpointer: BaseCheckpointSaver[Any],
) -> CompiledStateGraph[TurnState, TurnContext, TurnState, TurnState]:
    """The compiled graph bound to a checkpointer (a cheap copy; the graph is built once)."""
    return graph.copy(update={"checkpointer": checkpointer})
