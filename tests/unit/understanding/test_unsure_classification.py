"""A model that breaks the classification schema twice does not fail the turn when the tier
has read the message: the tier's reading carries it (shared/graph/nodes/classification.py)."""

from __future__ import annotations

import json

from shared.app.turn import TurnService
from shared.deps import Deps
from shared.fakes.scripted_llm import ScriptedLLM
from shared.understanding import UnderstandingTier
from tests.unit.turn_kit import add_person, metadata, nodes, request
from tests.unit.understanding.conftest import with_tier


def test_the_tiers_reading_answers_when_the_model_cannot_classify(
    deps: Deps, tier: UnderstandingTier, llm: ScriptedLLM
) -> None:
    wired = with_tier(deps, tier)
    add_person(wired, "Tom", "friend")
    llm.add(json.dumps({"route": "weird"}), json.dumps({"route": "odd"}), "A book he'd like.")
    response = TurnService(wired).run("alice", request("what should I get Tom for his birthday?"))
    assert response.reply.kind == "text"
    assert response.reply.text.startswith("A book he'd like.")
    recorded = metadata(wired, "m1")
    assert recorded.failed_node is None and recorded.route == "simple"
    assert [c.kind for c in llm.calls] == ["structured", "structured", "stream"]
    assert {"entity_resolution", "semantic_retrieval"} <= set(nodes(wired, "m1"))


def test_without_the_tier_the_turn_still_fails_clearly(deps: Deps, llm: ScriptedLLM) -> None:
    llm.add(json.dumps({"route": "weird"}), json.dumps({"route": "odd"}))
    response = TurnService(deps).run("alice", request("what should I get Tom for his birthday?"))
    assert response.reply.kind == "fallback"
    assert metadata(deps, "m1").error_code == "model_output_invalid"
