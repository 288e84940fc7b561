"""``OperatorAlerts`` as an HTTP webhook (``Settings.operator_webhook_url``; unset: logged only).

The body is ``{"event": ..., "payload": {...}, "source": "agents"}`` as JSON. Delivery is
best effort: a refused or slow webhook is logged, never retried here and never fails the job
(the alert is also in the logs the monitoring reads).
"""

from __future__ import annotations

import logging
from typing import Any

import httpx

log = logging.getLogger("operator-alerts")


class WebhookOperatorAlerts:
    def __init__(self, url: str | None, client: httpx.Client | None = None) -> None:
        self._url = url or None
        self._client = client or httpx.Client(timeout=5.0)

    def alert(self, event: str, payload: dict[str, Any]) -> bool:
        log.warning("operator alert", extra={"event": event, **_loggable(payload)})
        if self._url is None:
            return False
        body = {"event": event, "payload": payload, "source": "agents"}
        try:
            response = self._client.post(self._url, json=body)
        except httpx.HTTPError as exc:
            log.error("operator webhook unreachable", extra={"event": event, "error": str(exc)})
            return False
        if response.status_code >= 300:
            log.error(
                "operator webhook refused",
                extra={"event": event, "status": response.status_code},
            )
            return False
        return True


def _loggable(payload: dict[str, Any]) -> dict[str, Any]:
    # Ids only: goals and results are the user's data and stay out of the logs.
    return {key: value for key, value in payload.items() if key.endswith("_id")}
