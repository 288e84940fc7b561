from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictBool, model_validator


def digest_of(*parts: Any) -> str:
    """A short, URL-safe digest of JSON-able parts: what an etag (AIP-154) is made of."""
    digest = hashlib.sha256(json.dumps(parts, default=str, sort_keys=True).encode()).digest()
    return base64.urlsafe_b64encode(digest[:15]).decode()


class Strict(BaseModel):
    """Base for every model: unknown fields are an error, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Confirmation(Strict):
    """A request that erases something for good: ``{"confirm": true}``, nothing else."""

    confirm: StrictBool  # a deliberate act: JSON true, nothing else

    @model_validator(mode="after")
    def _confirmed(self) -> Confirmation:
        if not self.confirm:
            raise ValueError("confirm must be true")
        return self


SUBTASK_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$"  # a step of a plan, a job's subtask
MAX_PLANNED_SUBTASKS = 10


# A string field whose over-long answer must be refused, not trimmed (an id, a code):
# shared/adapters/vertex_schema.py trims the others.
NO_TRIM = "x-no-trim"
