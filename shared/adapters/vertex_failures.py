"""Every way a Vertex AI call fails, mapped to the product's error tree in this one place.

An HTTP error carries Google's error body ``{"error": {"code", "message", "status",
"details"}}`` (https://cloud.google.com/apis/design/errors); a 429's details may hold a
``google.rpc.RetryInfo`` with ``retryDelay`` ("2s"). A 200 may still carry no text: the
prompt was blocked (``promptFeedback.blockReason``) or the candidate stopped for a reason
other than STOP (``finishReason``, https://cloud.google.com/vertex-ai/generative-ai/docs/
reference/rest/v1/GenerateContentResponse). What the user then sees is decided by the turn
(``ModelDeclined`` gets a reply of its own, the rest the fallback), never an empty message.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from google.genai import errors as genai_errors
from google.genai import types

from shared.errors import (
    AppError,
    ConfigurationError,
    DependencyUnavailable,
    ModelDeclined,
    ModelNotFound,
    ModelOutputInvalid,
    ModelRequestRefused,
    ModelThrottled,
)

log = logging.getLogger("models")

# Stops that mean "the model will not say this"; MAX_TOKENS and OTHER are not refusals.
DECLINED_FINISH = frozenset(
    {"SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "MODEL_ARMOR"}
)
_DELAY = re.compile(r"^(?P<seconds>\d+(?:\.\d+)?)s$")


def retry_delay(body: Any) -> float | None:
    """Seconds of a ``google.rpc.RetryInfo`` in an error body, if it has one."""
    error = body.get("error", body) if isinstance(body, dict) else {}
    for detail in error.get("details") or []:
        delay = detail.get("retryDelay", "") if isinstance(detail, dict) else ""
        match = _DELAY.match(str(delay))
        if match:
            return float(match["seconds"])
    return None


def from_api_error(operation: str, exc: genai_errors.APIError) -> AppError:
    message = f"{operation}: Vertex AI answered {exc.code} {exc.status or ''}: {exc.message or ''}"
    if exc.code in (401, 403):
        return ConfigurationError(message)
    if exc.code == 404:
        # A retired or mistyped model id: only an operator can fix it (shared/model_catalog.py).
        log.error("model not found: %s", message)
        return ModelNotFound(message)
    if exc.code == 429:
        delay = retry_delay(exc.details)
        return ModelThrottled(message, retry_after=None if delay is None else int(delay + 0.999))
    if exc.code == 408 or exc.code >= 500:
        return DependencyUnavailable(message)
    log.error("model request refused: %s", message)  # a request we built wrongly
    return ModelRequestRefused(message)


def block_reason(response: types.GenerateContentResponse) -> str | None:
    feedback = response.prompt_feedback
    if feedback is not None and feedback.block_reason is not None:
        return str(feedback.block_reason.value)
    return None


def finish_reason(response: types.GenerateContentResponse) -> str | None:
    if response.candidates and response.candidates[0].finish_reason is not None:
        return str(response.candidates[0].finish_reason.value)
    return None


def without_text(name: str, response: types.GenerateContentResponse | None) -> AppError:
    """The error for an answer that has no text at all."""
    if response is None:
        return ModelOutputInvalid(f"{name}: no response")
    blocked = block_reason(response)
    if blocked is not None:
        return ModelDeclined(f"{name}: prompt blocked ({blocked})", reason=blocked)
    finish = finish_reason(response)
    if finish in DECLINED_FINISH:
        return ModelDeclined(f"{name}: stopped for {finish}", reason=finish)
    return ModelOutputInvalid(f"{name}: no text (finish reason {finish})")
