"""What the turn function loads while its instance starts, before it takes traffic.

functions-framework imports ``main.py`` before it listens, so what is done at import is paid
before the instance is ready and never by a user's turn: the modules of the turn's clients
imported (``Deps.preload``), the turn graph compiled, and, where
it runs in this process, the understanding tier loaded (spaCy, dateparser, MiniLM and the
router's vectors) and run on a few sample messages (their lazy first-call paths: the word
lists a lowercase name is checked against, the first-name list, another language), the
model client's request and response types built once (``Deps.preload``), and the stores
connected (``Deps.connect``: a store that does not answer is logged and connects on first
use). The model client still connects on its first request. Nothing here writes.
"""

from __future__ import annotations

import gc

from shared.deps import Deps
from shared.graph.builder import build_turn_graph
from shared.understanding import Context

# Reach the tier's parts a first turn reaches, each loaded on its first use: a person, a
# relation, a time, a request; names typed in lower case (WordNet's word lists, the first
# names); an open question the tier leaves to the model; another language.
SAMPLES = (
    "Can you remind me to call my sister Anna next Friday at 5 pm about the trip?",
    "had coffee with priya yesterday, does oliver have a dog?",
    "Could you explain how a rainbow forms?",
    "Wie wird das Wetter morgen in Berlin?",
)


def warm_up(deps: Deps) -> None:
    deps.preload()
    build_turn_graph()
    deps.connect()
    if deps.tier_in_process:
        _warm_tier(deps)
    # What the warm-up allocated is collected now, not by a full collection in the middle
    # of a turn (measured: the second turn on a new instance took 0.45 s more without it).
    gc.collect()


def _warm_tier(deps: Deps) -> None:
    tier = deps.understanding
    assert tier is not None, "the tier is on when it runs in process"
    tier.load()
    context = Context(now=deps.clock.now())
    for sample in SAMPLES:
        for guess in (False, True):  # the local model's settings guess open routes
            tier.understand(sample, context, guess=guess)
