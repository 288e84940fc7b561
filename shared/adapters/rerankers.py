"""``Reranker`` adapters: the Vertex AI ranking API (production) and the identity (local).

The ranking API is Discovery Engine's ``rankingConfigs.rank`` (semantic-ranker models):
``POST https://discoveryengine.googleapis.com/v1/projects/P/locations/global/
rankingConfigs/default_ranking_config:rank`` with the query and at most 200 records; it
answers record ids with scores, best first. No index or setup is needed. The decrypted fact
texts leave for Google's API as they do for the model; ``ignoreRecordDetailsInResponse``
keeps them out of the answer. ``Settings.ranking_base_url`` and ``vertex_access_token`` point
it at the tests' fake endpoint. Errors map like the other Vertex calls: throttling, 5xx and
transport failures are ``DependencyUnavailable`` (the caller keeps the fused order).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from shared.config import Settings
from shared.errors import ConfigurationError, DependencyUnavailable

RANKING_HOST = "https://discoveryengine.googleapis.com"
MAX_RECORDS = 200
_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]


class IdentityReranker:
    """Keeps the fused order: the offline default, and the baseline the bench compares."""

    name = "identity"
    reads_texts = False

    def rerank(self, query: str, texts: Sequence[str]) -> list[int]:
        return list(range(len(texts)))


class VertexReranker:
    name = "vertex"
    reads_texts = True

    def __init__(self, settings: Settings, timeout: float = 5.0) -> None:
        base = settings.ranking_base_url or RANKING_HOST
        self._url = (
            f"{base}/v1/projects/{settings.gcp_project}/locations/{settings.ranking_location}"
            f"/rankingConfigs/default_ranking_config:rank"
        )
        self._model = settings.ranking_model
        self._static_token = settings.vertex_access_token
        self._credentials: Any = None
        self._client = httpx.Client(timeout=timeout)

    def rerank(self, query: str, texts: Sequence[str]) -> list[int]:
        if len(texts) < 2:
            return list(range(len(texts)))
        head = list(texts[:MAX_RECORDS])
        body = {
            "model": self._model,
            "query": query,
            "records": [{"id": str(i), "content": text} for i, text in enumerate(head)],
            "topN": len(head),
            "ignoreRecordDetailsInResponse": True,
        }
        try:
            response = self._client.post(
                self._url, json=body, headers={"Authorization": f"Bearer {self._token()}"}
            )
        except httpx.TransportError as exc:
            raise DependencyUnavailable(f"ranking API: {type(exc).__name__}") from exc
        if response.status_code in (401, 403):
            raise ConfigurationError(f"ranking API answered {response.status_code}")
        if response.status_code == 429 or response.status_code >= 500:
            raise DependencyUnavailable(f"ranking API answered {response.status_code}")
        response.raise_for_status()
        ranked = [int(r["id"]) for r in response.json().get("records", [])]
        seen = set(ranked)  # the API may leave records out: they follow, in fused order
        return ranked + [i for i in range(len(texts)) if i not in seen]

    def _token(self) -> str:
        if self._static_token:
            return self._static_token
        import google.auth
        from google.auth.transport.requests import Request

        if self._credentials is None:
            self._credentials, _ = google.auth.default(scopes=_SCOPES)
        if not self._credentials.valid:
            self._credentials.refresh(Request())
        return str(self._credentials.token)
