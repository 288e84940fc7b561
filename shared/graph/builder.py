"""Wiring of the Global Supervisor: seven stage subgraphs and the routes between them.

Stages live in ``nodes/`` (one module each, with its subgraph builder); routing decisions in
``routing.py``. ``docs/graph.md`` is generated from this graph (``make graph``).
"""

from __future__ import annotations

from functools import lru_cache

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
from shared.graph.routing import (
    after_classification,
    after_disambiguation,
    after_hitl,
)
from shared.graph.state import TurnState


@lru_cache(maxsize=1)
def build_turn_graph() -> CompiledStateGraph[TurnState, TurnContext, TurnState, TurnState]:
    graph = StateGraph(TurnState, context_schema=TurnContext)
    graph.add_node("entry", entry.build())
    graph.add_node("hitl", hitl.build())
    graph.add_node("classification", classification.build())
    graph.add_node("memory", memory.build())
    graph.add_node("disambiguation", disambiguation.build())
    graph.add_node("planning", planning.build())
    graph.add_node("response", response.build())
    graph.add_edge(START, "entry")
    graph.add_edge("entry", "hitl")
    graph.add_conditional_edges(
        "hitl", after_hitl, ["classification", "memory", "planning", "response"]
    )
    graph.add_conditional_edges("classification", after_classification, ["memory", "response"])
    graph.add_edge("memory", "disambiguation")
    graph.add_conditional_edges("disambiguation", after_disambiguation, ["planning", "response"])
    graph.add_edge("planning", "response")
    graph.add_edge("response", END)
    return graph.compile(name="global_supervisor")
