"""``Publisher`` on Pub/Sub (the client honours ``PUBSUB_EMULATOR_HOST`` itself)."""

from __future__ import annotations

from contextlib import nullcontext

from google.cloud.pubsub_v1 import PublisherClient

from shared.adapters.breaker import CircuitBreaker
from shared.adapters.gcp_errors import transient_as_unavailable


class PubSubPublisher:
    def __init__(
        self,
        client: PublisherClient,
        project: str,
        timeout: float = 10.0,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        self._client = client
        self._project = project
        self._timeout = timeout
        self._breaker = breaker

    def publish(self, topic: str, data: bytes, attributes: dict[str, str]) -> str:
        """Wait for the message id: the response must not be sent before the job is queued."""
        path = self._client.topic_path(self._project, topic)
        guard = self._breaker.guard() if self._breaker else nullcontext()
        with guard, transient_as_unavailable("pub/sub"):
            future = self._client.publish(path, data, **attributes)
            return str(future.result(timeout=self._timeout))
