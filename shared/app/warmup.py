"""What the turn function loads while its instance starts, before it takes traffic.

functions-framework imports ``main.py`` before it listens, so what is done at import is paid
before the instance is ready and never by a user's turn: the modules of the turn's clients
imported (``Deps.preload``), the turn graph compiled, and, where
it runs in this process, the understanding tier loaded (spaCy, dateparser, MiniLM and the
router's vectors) and run once on a sample message (their lazy first-call paths), and the
stores connected (``Deps.connect``: a store that does not answer is logged and connects on
first use). The model client still connects on its first request.
"""

from __future__ import annotations

from shared.deps import Deps
from shared.graph.builder import build_turn_graph
from shared.understanding import Context

# Reaches the tier's parts a first turn reaches: a person, a relation, a time, a request.
SAMPLE = "Can you remind me to call my sister Anna next Friday at 5 pm about the trip?"


def warm_up(deps: Deps) -> None:
    deps.preload()
    build_turn_graph()
    deps.connect()
    if not deps.tier_in_process:
        return
    tier = deps.understanding
    assert tier is not None, "the tier is on when it runs in process"
    tier.load()
    tier.understand(SAMPLE, Context(now=deps.clock.now()))
