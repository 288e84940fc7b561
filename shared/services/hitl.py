"""Human-in-the-loop over the trust store: what the turn graph and the agents runner call.

``escalation_for`` reads the user's trust record and applies the policy to a proposed
action (``shared.services.hitl_policy``); ``call_needs_approval`` says whether one tool call
waits for the user (the job runner before each call, the planner before a step whose call
is already known); ``record_task_outcome`` counts a finished task in
one transaction and applies the level rules (``shared.services.hitl_trust``). Count each
task once: call it after the job's own idempotency claim, not before.
"""

from __future__ import annotations

from datetime import datetime

from shared.agents.spec import Tool
from shared.config import Settings
from shared.models.trust import ActionContext, EscalationDecision, Outcome, TrustRecord
from shared.ports import TrustStore
from shared.services.hitl_policy import escalate, record_outcome, trust_settings


def escalation_for(
    trust: TrustStore, settings: Settings, user_id: str, action: ActionContext
) -> EscalationDecision | None:
    """Approve, notify, or None, under the user's effective mode and the deployed limits."""
    return escalate(action, trust_settings(trust.get(user_id), settings))


def call_needs_approval(
    trust: TrustStore, settings: Settings, user_id: str, agent: str, tool: Tool
) -> bool:
    """Sensitive calls always; calls that act for the user when the user's mode has them
    approved first (human-in-command); calls that only read never."""
    if not (tool.sensitive or tool.acts):
        return False
    action = ActionContext(agent=agent, tool=tool.name, sensitive=tool.sensitive, confidence=1.0)
    decision = escalation_for(trust, settings, user_id, action)
    return tool.sensitive or (decision is not None and decision.escalation == "approve")


def record_task_outcome(
    trust: TrustStore, user_id: str, outcome: Outcome, now: datetime
) -> TrustRecord:
    """The stored record after counting one finished task (promoted or demoted)."""
    return trust.update(user_id, lambda record: record_outcome(record, outcome, now), now)
