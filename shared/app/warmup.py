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

That import runs in gunicorn's master, which then forks the one worker that serves. What a
fork does not carry over is redone in the worker, before it accepts (``warm_up_worker``).
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import time
from collections.abc import Collection

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
log = logging.getLogger("warmup")


def start_instance(deps: Deps) -> None:
    """The turn function's start: warm up now, in the process that imports ``main.py``, and
    again briefly in each worker gunicorn forks from it (a worker that dies is forked anew)."""
    failed = warm_up(deps)
    os.register_at_fork(after_in_child=lambda: warm_up_worker(deps, skip=failed))


def warm_up(deps: Deps) -> list[str]:
    """Load and connect what a first turn needs; returns the stores that did not answer."""
    deps.preload()
    build_turn_graph()
    failed = deps.connect()
    if deps.tier_in_process:  # the local model's settings guess open routes
        _warm_tier(deps, SAMPLES, guesses=(False, True))
    # What the warm-up allocated is collected now, not by a full collection in the middle
    # of a turn (measured: the second turn on a new instance took 0.45 s more without it).
    gc.collect()
    return failed


def warm_up_worker(deps: Deps, skip: Collection[str]) -> None:
    """In a worker just forked from the warmed process, before it accepts: redis-py opens a
    new connection in a new process, gRPC re-establishes Firestore's channel, and the tier's
    first run writes to pages still shared with the parent (copy on write); each cost the
    first turn 10-20 ms. Stores that did not answer in the parent (``skip``) are left to
    their first use, so an outage costs its timeout once per instance, not twice."""
    # Until gunicorn installs the worker's own handlers, the master's copies would only
    # queue a SIGTERM for a loop the worker never runs: a stop now ends the worker at once.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    started = time.perf_counter()
    failed = deps.connect(skip=skip)
    if deps.tier_in_process:  # one run, as this deployment's turns call it
        _warm_tier(deps, SAMPLES[:1], guesses=(deps.settings.model_strength == "weak",))
    ms = round((time.perf_counter() - started) * 1000, 1)
    log.info("worker warmed up", extra={"ms": ms, "failed": failed, "skipped": sorted(skip)})


def _warm_tier(deps: Deps, samples: tuple[str, ...], guesses: tuple[bool, ...]) -> None:
    tier = deps.understanding
    assert tier is not None, "the tier is on when it runs in process"
    tier.load()
    context = Context(now=deps.clock.now())
    for sample in samples:
        for guess in guesses:
            tier.understand(sample, context, guess=guess)
