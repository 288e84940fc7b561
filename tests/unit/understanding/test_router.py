"""The router: its committed vectors match the examples, and it decides only with margin."""

from __future__ import annotations

import numpy as np
import pytest

from shared.errors import ConfigurationError
from shared.ports import Embedder
from shared.understanding.examples import EXAMPLES
from shared.understanding.result import LABELS
from shared.understanding.router import (
    MIN_MARGIN,
    MIN_SCORE,
    VECTORS_FILE,
    Router,
    examples_digest,
    stored_digest,
)
from shared.understanding.tier import UnderstandingTier


def test_the_committed_vectors_are_made_from_the_current_examples() -> None:
    assert stored_digest() == examples_digest(), "run scripts/understanding_vectors.py"


def test_every_label_has_examples() -> None:
    assert {label for label, _ in EXAMPLES} == set(LABELS)


def test_the_committed_vectors_are_minilms_own(tier: UnderstandingTier) -> None:
    with np.load(VECTORS_FILE, allow_pickle=False) as data:
        stored = data["vectors"][:5].astype(np.float32)
    fresh = np.asarray(tier.router.embedder.embed([t for _, t in EXAMPLES[:5]]), dtype=np.float32)
    assert np.abs(stored - fresh).max() < 2e-3  # float16 in the file


def test_stale_vectors_are_refused(tmp_path, tier: UnderstandingTier) -> None:  # type: ignore[no-untyped-def]
    stale = tmp_path / "vectors.npz"
    np.savez_compressed(
        stale, vectors=np.zeros((1, 384)), labels=np.asarray(["greeting"]), digest=np.asarray("old")
    )
    router = Router(tier.router.embedder, path=stale)
    with pytest.raises(ConfigurationError, match="stale"):
        router.load()


class _OtherEmbedder:
    model_name = "gemini-embedding-001"
    dimension = 768

    def embed(self, texts: list[str], task: str = "RETRIEVAL_DOCUMENT") -> list[list[float]]:
        raise AssertionError("never called")


def test_another_embedding_model_is_refused() -> None:
    embedder: Embedder = _OtherEmbedder()
    with pytest.raises(ConfigurationError):
        Router(embedder)


def test_a_close_call_falls_through(tier: UnderstandingTier) -> None:
    scores = dict.fromkeys(LABELS, 0.1)
    scores |= {"statement": MIN_SCORE + 0.2, "person_question": MIN_SCORE + 0.2 - MIN_MARGIN / 2}
    decision = tier.router.decide(scores)
    assert (decision.label, decision.best) == (None, "statement")
    assert "too close" in decision.reason
    scores["person_question"] = MIN_SCORE
    assert tier.router.decide(scores).label == "statement"


def test_nothing_near_falls_through(tier: UnderstandingTier) -> None:
    scores = dict.fromkeys(LABELS, 0.0) | {"research": MIN_SCORE - 0.01}
    assert tier.router.decide(scores).label is None


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("good morning!", "greeting"),
        ("thanks a million", "thanks"),
        ("what does my sister do for work?", "person_question"),
        ("your answers are far too long", "feedback"),
    ],
)
def test_plain_messages_route_to_their_label(
    tier: UnderstandingTier, text: str, label: str
) -> None:
    assert tier.router.route(text).label == label
