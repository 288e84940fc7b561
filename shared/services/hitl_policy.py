"""Escalation: which of an agent's proposed actions go to the user, and how. Pure, no I/O.

Triggers, highest priority first; ``escalate`` reports every trigger that fired in this
order and names the first:

============================  ========  =================================================
trigger                       priority  fires when
============================  ========  =================================================
``sensitive_action``          highest   the tool is declared sensitive, or its name holds
                                        delete, publish, pay, send or share (the name
                                        check can only add approvals, never remove one)
``cost_over_limit``           high      estimated cost > the limit (USD, per action)
``low_confidence``            medium    confidence < the minimum
``consecutive_failures``      medium    the agent failed >= the maximum times in a row
                                        (an agent failing the same way again is likely
                                        stuck in a loop: a human looks at it)
``out_of_scope``              low       no tool of the agent matches the request
============================  ========  =================================================

Modes: a fired trigger at or above the mode's ``APPROVAL_FLOOR`` needs the user's approval
(the action waits, and is rejected when the approval times out), one below it only
notifies the user, and nothing fired means no escalation, except:

- human-in-command: every action needs approval, a trigger or not;
- human-in-the-loop: sensitive, costly, low-confidence and failing-in-a-loop actions need
  approval (consecutive failures rank with low confidence: a stuck agent pauses until the
  user says to go on); out of scope only notifies;
- human-on-the-loop: only notifies, except a sensitive action, which needs approval in
  every mode: it cannot be undone, so even the most trusted assistant asks first.

Callers: ``needs_approval(action, trust_settings(record, settings))``, or ``escalate`` for
the trigger and reason to show; ``record_outcome`` (re-exported from
``shared.services.hitl_trust``) once per finished task.
"""

from __future__ import annotations

import re

from shared.config import Settings
from shared.models.trust import (
    ActionContext,
    Escalation,
    EscalationDecision,
    HitlMode,
    Priority,
    Trigger,
    TrustRecord,
    TrustSettings,
)
from shared.services.hitl_trust import MODE_OF_LEVEL, effective_mode, record_outcome

__all__ = [
    "APPROVAL_FLOOR",
    "MODE_OF_LEVEL",
    "effective_mode",
    "escalate",
    "fired_triggers",
    "looks_sensitive",
    "needs_approval",
    "record_outcome",
    "trust_settings",
]

# The lowest trigger priority that blocks; None: every action blocks.
APPROVAL_FLOOR: dict[HitlMode, Priority | None] = {
    "human_in_command": None,
    "human_in_the_loop": Priority.MEDIUM,
    "human_on_the_loop": Priority.HIGHEST,
}
SENSITIVE_WORDS = frozenset({"delete", "publish", "pay", "send", "share"})
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_WORD = re.compile(r"[^a-z0-9]+")


def trust_settings(record: TrustRecord, settings: Settings) -> TrustSettings:
    """The user's effective mode with the deployment's limits."""
    return TrustSettings(
        mode=effective_mode(record),
        cost_limit_usd=settings.hitl_cost_limit_usd,
        min_confidence=settings.hitl_min_confidence,
        max_consecutive_failures=settings.hitl_max_consecutive_failures,
    )


def looks_sensitive(tool: str) -> bool:
    """Whether a word of the tool's name (snake, kebab or camel case) is a sensitive verb."""
    words = _WORD.split(_CAMEL.sub(r"\1_\2", tool).lower())
    return not SENSITIVE_WORDS.isdisjoint(words)


def fired_triggers(action: ActionContext, settings: TrustSettings) -> list[Trigger]:
    """Every trigger the action fires, highest priority first (ties: declaration order)."""
    hits = {
        Trigger.SENSITIVE_ACTION: action.sensitive or looks_sensitive(action.tool),
        Trigger.COST_OVER_LIMIT: action.estimated_cost_usd > settings.cost_limit_usd,
        Trigger.LOW_CONFIDENCE: action.confidence < settings.min_confidence,
        Trigger.CONSECUTIVE_FAILURES: (
            action.consecutive_failures >= settings.max_consecutive_failures
        ),
        Trigger.OUT_OF_SCOPE: not action.in_scope,
    }
    return sorted((t for t in Trigger if hits[t]), key=lambda t: -t.priority)


def escalate(action: ActionContext, settings: TrustSettings) -> EscalationDecision | None:
    """Approval needed, a notification, or None (the action runs unescalated)."""
    fired = fired_triggers(action, settings)
    escalation = _escalation(settings.mode, fired)
    if escalation is None:
        return None
    top = fired[0] if fired else None
    return EscalationDecision(
        escalation=escalation,
        trigger=top,
        triggers=fired,
        mode=settings.mode,
        reason=_reason(top, action, settings),
    )


def needs_approval(action: ActionContext, settings: TrustSettings) -> bool:
    decision = escalate(action, settings)
    return decision is not None and decision.escalation == "approve"


def _escalation(mode: HitlMode, fired: list[Trigger]) -> Escalation | None:
    floor = APPROVAL_FLOOR[mode]
    if floor is None:
        return "approve"
    if not fired:
        return None
    return "approve" if fired[0].priority >= floor else "notify"


def _reason(trigger: Trigger | None, action: ActionContext, limits: TrustSettings) -> str:
    match trigger:
        case Trigger.SENSITIVE_ACTION:
            return f"sensitive action {action.tool!r} needs the user's confirmation"
        case Trigger.COST_OVER_LIMIT:
            return (
                f"estimated cost ${action.estimated_cost_usd:.2f} is over the limit"
                f" of ${limits.cost_limit_usd:.2f}"
            )
        case Trigger.LOW_CONFIDENCE:
            return f"confidence {action.confidence:.2f} is below {limits.min_confidence:.2f}"
        case Trigger.CONSECUTIVE_FAILURES:
            return (
                f"{action.consecutive_failures} consecutive failures"
                f" (limit {limits.max_consecutive_failures}): the agent may be stuck"
            )
        case Trigger.OUT_OF_SCOPE:
            return f"out of scope: agent {action.agent!r} has no tool for this"
        case None:
            return "human-in-command: every action is approved"
