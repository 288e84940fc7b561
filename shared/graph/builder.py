"""Wiring of the turn graph. Nodes live in ``nodes/``, routing decisions in ``routing.py``."""

from __future__ import annotations

from functools import lru_cache

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from shared.graph.context import TurnContext
from shared.graph.nodes.classify import classify
from shared.graph.nodes.respond import answer, delegate, greet
from shared.graph.routing import after_classify
from shared.graph.state import TurnState


@lru_cache(maxsize=1)
def build_turn_graph() -> CompiledStateGraph[TurnState, TurnContext, TurnState, TurnState]:
    graph = StateGraph(TurnState, context_schema=TurnContext)
    graph.add_node("classify", classify)
    graph.add_node("greet", greet)
    graph.add_node("answer", answer)
    graph.add_node("delegate", delegate)
    graph.add_edge(START, "classify")
    graph.add_conditional_edges("classify", after_classify, ["greet", "answer", "delegate"])
    for node in ("greet", "answer", "delegate"):
        graph.add_edge(node, END)
    return graph.compile(name="global_supervisor")
