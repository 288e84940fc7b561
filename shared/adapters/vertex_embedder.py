"""gemini-embedding-001 on Vertex AI through google-genai.

In Vertex mode google-genai 3.4.0 sends one text to ``{model}:embedContent`` and several to
``{model}:batchEmbedContents``. Vectors of fewer than 3072 dimensions come back unnormalised,
so they are L2-normalised here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from google import genai
from google.genai import types

from shared.adapters.model_guard import check_allow_model_requests
from shared.adapters.vertex_client import vertex_errors
from shared.errors import ModelOutputInvalid


class VertexEmbedder:
    def __init__(
        self,
        client: genai.Client,
        model: str = "gemini-embedding-001",
        dimension: int = 768,
        batch_size: int = 100,
        task_type: str | None = None,
    ) -> None:
        self._client = client
        self._batch_size = batch_size
        self._task_type = task_type
        self.model_name = model
        self.dimension = dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        check_allow_model_requests(f"vertex:{self.model_name}")
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            vectors.extend(self._embed_batch(list(texts[start : start + self._batch_size])))
        return vectors

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        config = types.EmbedContentConfig(
            output_dimensionality=self.dimension, task_type=self._task_type
        )
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
