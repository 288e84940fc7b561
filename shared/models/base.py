from __future__ import annotations

from pydantic import BaseModel, ConfigDict, StrictBool, model_validator


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
