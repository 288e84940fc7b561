"""all-MiniLM-L6-v2 in-process (``LocalEmbedder``): the local model service's embedder, also
usable without the service for a few short texts."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pytest

from shared.adapters import model_guard
from shared.adapters.local_embedder import LocalEmbedder

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def embedder() -> Iterator[LocalEmbedder]:
    with model_guard.override_allow_model_requests(True):
        model = LocalEmbedder()
        model.load()
        yield model


def test_embedder_reproduces_the_published_similarity_matrix(embedder: LocalEmbedder) -> None:
    """sentence-transformers' documented output for all-MiniLM-L6-v2 on these sentences."""
    vectors = np.array(
        embedder.embed(
            ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
        )
    )

    expected = np.array([[1.0, 0.6660, 0.1046], [0.6660, 1.0, 0.1411], [0.1046, 0.1411, 1.0]])
    np.testing.assert_allclose(vectors @ vectors.T, expected, atol=1e-3)


def test_embedder_vectors_are_unit_length_384_and_batch_independent(
    embedder: LocalEmbedder,
) -> None:
    texts = ["short", "a somewhat longer sentence about nothing in particular", "x " * 400]

    batch = embedder.embed(texts)
    singles = [embedder.embed([text])[0] for text in texts]

    assert [len(v) for v in batch] == [384, 384, 384]
    assert all(math.isclose(float(np.linalg.norm(v)), 1.0, rel_tol=1e-5) for v in batch)
    np.testing.assert_allclose(np.array(batch), np.array(singles), atol=1e-5)
    assert embedder.embed(["short"]) == embedder.embed(["short"])
