"""Human-in-the-loop: trust levels, modes, escalation triggers, and the settings API's models.

The rules live in ``shared.services.hitl_policy`` (escalation) and
``shared.services.hitl_trust`` (levels); these are the records they read and return.
"""

from __future__ import annotations

from datetime import datetime
from enum import IntEnum, StrEnum
from typing import Literal

from pydantic import Field

from shared.models.base import Strict

TrustLevel = Literal["novice", "proficient", "expert"]
HitlMode = Literal["human_in_command", "human_in_the_loop", "human_on_the_loop"]
Outcome = Literal["success", "failure", "serious_incident"]
Escalation = Literal["approve", "notify"]  # approve: blocks until the user answers
RequirementName = Literal[
    "tasks_completed", "success_rate", "days_since_first_task", "days_since_last_incident"
]


class Priority(IntEnum):
    LOW = 1
    MEDIUM = 2
    HIGH = 3
    HIGHEST = 4


class Trigger(StrEnum):
    """Why an action goes to the user; declared highest priority first."""

    SENSITIVE_ACTION = "sensitive_action"  # irreversible: delete, pay, publish, send
    COST_OVER_LIMIT = "cost_over_limit"  # runaway spending
    LOW_CONFIDENCE = "low_confidence"  # the agent itself is unsure
    CONSECUTIVE_FAILURES = "consecutive_failures"  # may be stuck in a loop
    OUT_OF_SCOPE = "out_of_scope"  # no matching tool: beyond the agent

    @property
    def priority(self) -> Priority:
        return _PRIORITIES[self]


_PRIORITIES = {
    Trigger.SENSITIVE_ACTION: Priority.HIGHEST,
    Trigger.COST_OVER_LIMIT: Priority.HIGH,
    Trigger.LOW_CONFIDENCE: Priority.MEDIUM,
    Trigger.CONSECUTIVE_FAILURES: Priority.MEDIUM,
    Trigger.OUT_OF_SCOPE: Priority.LOW,
}


class TrustRecord(Strict):
    """One user's trust in their assistant; ``tasks_completed`` counts successful tasks."""

    level: TrustLevel = "novice"
    pinned_mode: HitlMode | None = None  # the user's choice; None: the level's mode
    tasks_completed: int = Field(default=0, ge=0)
    tasks_failed: int = Field(default=0, ge=0)  # serious incidents included
    serious_incidents: int = Field(default=0, ge=0)
    first_task_at: datetime | None = None
    last_incident_at: datetime | None = None
    level_since: datetime | None = None  # None: novice since the start
    updated_at: datetime | None = None  # None: never stored (the defaults)


class ActionContext(Strict):
    """An agent's proposed action, as the supervisor sees it before it runs."""

    agent: str = Field(min_length=1, max_length=120)
    tool: str = Field(min_length=1, max_length=120)
    sensitive: bool  # the tool's own declaration (send, pay, delete, publish, share)
    confidence: float = Field(ge=0.0, le=1.0)
    estimated_cost_usd: float = Field(default=0.0, ge=0.0, allow_inf_nan=False)
    consecutive_failures: int = Field(default=0, ge=0)  # of this agent, before this action
    in_scope: bool = True  # False: no tool of the agent matches the request


class TrustSettings(Strict):
    """What ``escalate`` applies: the user's effective mode and the deployment's limits."""

    mode: HitlMode
    cost_limit_usd: float = Field(default=1.0, ge=0.0, allow_inf_nan=False)
    min_confidence: float = Field(default=0.6, ge=0.0, le=1.0)
    max_consecutive_failures: int = Field(default=3, ge=1)


class EscalationDecision(Strict):
    escalation: Escalation
    trigger: Trigger | None  # the highest fired; None: the mode alone asks (human-in-command)
    triggers: list[Trigger]  # every trigger that fired, highest priority first
    mode: HitlMode
    reason: str


# -- the settings API (the memory function's /settings/hitl/*) ------------------------------------
class Requirement(Strict):
    name: RequirementName
    required: int | float
    current: int | float | None  # None: no task yet, or no incident ever
    met: bool


class NextLevel(Strict):
    level: TrustLevel
    mode: HitlMode
    eligible: bool  # every requirement met: the next recorded outcome promotes
    requirements: list[Requirement]


class HitlView(Strict):
    level: TrustLevel
    mode: HitlMode  # effective: the pinned one, else the level's
    level_mode: HitlMode
    pinned_mode: HitlMode | None
    tasks_completed: int
    tasks_failed: int
    serious_incidents: int
    success_rate: float | None  # None before the first task
    first_task_at: datetime | None
    last_incident_at: datetime | None
    level_since: datetime | None
    updated_at: datetime | None
    next_level: NextLevel | None  # None at the top level
