"""docs/graph.md is the diagram of the graph the code builds, not of an older one."""

from __future__ import annotations

from scripts.graph_diagram import TARGET, render


def test_docs_graph_is_current() -> None:
    assert TARGET.read_text() == render(), "docs/graph.md is stale: run `make graph`"


def test_every_stage_and_node_is_in_the_diagram() -> None:
    diagram = render()
    for name in (
        "session_init", "summarize", "context_loader", "hitl_handler",
        "resolve_disambiguation", "classify", "entity_resolution", "semantic_retrieval",
        "temporal_retrieval", "memory_assembly", "fact_extraction", "disambiguation_blocking",
        "disambiguation_simple", "global_planner", "agent_execution", "greeting_text",
        "hitl_text", "simple_text", "complex_text", "message_persist",
    ):  # fmt: skip
        assert f"({name})" in diagram, name
