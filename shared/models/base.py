from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """Base for every model: unknown fields are an error, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


SUBTASK_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$"  # a step of a plan, a job's subtask
MAX_PLANNED_SUBTASKS = 10
