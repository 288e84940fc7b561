from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """Base for every model: unknown fields are an error, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)
