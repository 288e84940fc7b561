"""gemini-embedding-001 on Vertex AI through google-genai.

In Vertex mode google-genai 3.4.0 sends one text to ``{model}:embedContent`` and several to
``{model}:batchEmbedContents``. A request holds at most the model's documented number of
texts (``ModelInfo.batch_limit``: one for gemini-embedding-001, "Get text embeddings" page);
more is refused with 400. Facts are embedded as RETRIEVAL_DOCUMENT, what is searched with as
RETRIEVAL_QUERY: the two sides are embedded differently, so changing it needs a re-embed
(``scripts/reembed.py``). Vectors of fewer than 3072 dimensions come back unnormalised, so
they are L2-normalised here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from google import genai
from google.genai import types

from shared.adapters.model_guard import check_allow_model_requests
from shared.adapters.vertex_client import vertex_errors
from shared.errors import ModelOutputInvalid
from shared.model_catalog import info
from shared.ports import EmbedTask

_UNKNOWN_MODEL_BATCH = 1  # a model the catalog does not know: one text per request


class VertexEmbedder:
    def __init__(
        self,
        client: genai.Client,
        model: str = "gemini-embedding-001",
        dimension: int = 768,
        batch_size: int | None = None,
    ) -> None:
        known = info(model)
        limit = known.batch_limit if known is not None and known.batch_limit else None
        self._batch_size = min(batch_size or limit or _UNKNOWN_MODEL_BATCH, limit or 10**6)
        self._client = client
        self.model_name = model
        self.dimension = dimension

    def embed(
        self, texts: Sequence[str], task: EmbedTask = "RETRIEVAL_DOCUMENT"
    ) -> list[list[float]]:
        check_allow_model_requests(f"vertex:{self.model_name}")
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            batch = list(texts[start : start + self._batch_size])
            vectors.extend(self._embed_batch(batch, task))
        return vectors

    def _embed_batch(self, texts: list[str], task: EmbedTask) -> list[list[float]]:
        config = types.EmbedContentConfig(output_dimensionality=self.dimension, task_type=task)
        with vertex_errors(f"vertex:{self.model_name} embed"):
            response = self._client.models.embed_content(
                model=self.model_name, contents=texts, config=config
            )
        values = [embedding.values or [] for embedding in response.embeddings or []]
        if len(values) != len(texts) or any(len(v) != self.dimension for v in values):
            raise ModelOutputInvalid(
                f"{self.model_name}: expected {len(texts)} vectors of {self.dimension}, got "
                f"{[len(v) for v in values]}"
            )
        matrix = np.asarray(values, dtype=np.float64)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        if np.any(norms == 0.0):
            raise ModelOutputInvalid(f"{self.model_name}: returned a zero vector")
        result: list[list[float]] = (matrix / norms).tolist()
        return result
