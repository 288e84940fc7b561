"""The turn function's start (``shared.app.warmup``): what it loads before it listens."""

from __future__ import annotations

import sys

from shared.app.warmup import warm_up
from shared.config import Settings
from shared.deps import TURN_MODULES, Deps
from shared.graph.builder import build_turn_graph


def test_the_start_imports_what_a_turns_clients_are_built_from_and_compiles_the_graph() -> None:
    build_turn_graph.cache_clear()
    deps = Deps(Settings(model_provider="scripted"))
    try:
        warm_up(deps)
    finally:
        deps.close()  # the stores it connected (tests/integration/test_warm_connect.py)
    assert set(TURN_MODULES) <= set(sys.modules)
    assert build_turn_graph.cache_info().currsize == 1
    assert "llm" not in deps.__dict__  # no client built under a provider other than Vertex


def test_the_tier_is_warmed_only_where_it_runs_in_this_process() -> None:
    vertex = {
        "model_provider": "vertex",
        "vertex_base_url": "http://127.0.0.1:9",
        "vertex_access_token": "t",
    }
    assert Deps(Settings(**vertex)).tier_in_process  # MiniLM here, Gemini embeds the facts
    assert not Deps(Settings(**vertex, understanding_tier=False)).tier_in_process
    # make dev: MiniLM is the local model service's embedder, a network client
    assert not Deps(
        Settings(**vertex, vertex_embedding_model="all-MiniLM-L6-v2", embedding_dimension=384)
    ).tier_in_process
    assert not Deps(Settings(model_provider="scripted")).tier_in_process
