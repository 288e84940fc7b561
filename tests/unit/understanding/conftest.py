"""The tier's real parts, loaded once for the package: spaCy's small English model, and
MiniLM for the router (a real model: these tests opt in past the model guard)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from spacy.language import Language

from shared.adapters import model_guard
from shared.adapters.local_embedder import LocalEmbedder
from shared.deps import Deps
from shared.understanding.nlp import pipeline
from shared.understanding.tier import Context, UnderstandingTier

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)  # a Saturday; 13:00 in Zurich
ZONE = "Europe/Zurich"


@pytest.fixture(scope="session")
def nlp() -> Language:
    return pipeline()


@pytest.fixture(scope="session")
def tier() -> Iterator[UnderstandingTier]:
    with model_guard.override_allow_model_requests(True):
        loaded = UnderstandingTier(LocalEmbedder())
        loaded.load()
        yield loaded


@pytest.fixture
def context() -> Context:
    return Context(now=NOW, timezone=ZONE, currency="CHF")


def with_tier(deps: Deps, tier: UnderstandingTier) -> Deps:
    """The unit composition root with the tier (its in-memory stores include the agents').
    No speculative reply: a scripted queue answers calls in the order they come, and a reply
    started beside the classification call would take a reply at random
    (test_speculative_reply wires its own model, which answers by request)."""
    settings = deps.settings.model_copy(update={"speculative_reply": False})
    return Deps(
        settings,
        understanding=tier,
        **{name: value for name, value in deps.__dict__.items() if name != "settings"},
    )
