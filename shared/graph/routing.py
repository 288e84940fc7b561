"""Pure routing functions: state in, next node name out."""

from __future__ import annotations

from typing import Literal

from shared.graph.state import TurnState


def after_classify(state: TurnState) -> Literal["greet", "answer", "delegate"]:
    if state.intent is None or state.intent.route == "simple":
        return "answer"
    return "greet" if state.intent.route == "greeting" else "delegate"
