"""The red-flag check's structured output (the extraction's own output shape is
``shared.models.extraction``, shared with the understanding tier)."""

from __future__ import annotations

from pydantic import Field

from shared.models.base import Strict


class RedFlagVerdict(Strict):
    """The model's answer to "are these two descriptions one person?"."""

    same_person: bool
    confidence: float = Field(ge=0.0, le=1.0)
    reason: str = Field(default="", max_length=200)
