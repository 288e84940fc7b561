"""Agent jobs delivered by Pub/Sub push (at least once).

Idempotent: the job id is claimed in Firestore before any work (a redelivery finds the claim
and does nothing); the result is written as an assistant message whose id is derived from
the job id, so even a retry after a crash cannot post it twice. A transient failure releases
the claim and raises, so Pub/Sub redelivers; after 5 attempts the message goes to the
dead-letter topic.
"""

from __future__ import annotations

import base64
import binascii
import logging
from dataclasses import dataclass
from datetime import datetime

from pydantic import ValidationError

from shared.deps import Deps
from shared.errors import InvalidEvent
from shared.models.domain import AgentJob, Message
from shared.ports import ChatTurn, LLMRequest

log = logging.getLogger("agents")


@dataclass(frozen=True)
class JobOutcome:
    job_id: str
    status: str  # done | duplicate | expired


def job_from_push(data: object) -> tuple[AgentJob, str]:
    """Decode the Pub/Sub message of a push CloudEvent into (job, message id)."""
    if not isinstance(data, dict) or not isinstance(data.get("message"), dict):
        raise InvalidEvent("not a Pub/Sub message event")
    message = data["message"]
    try:
        raw = base64.b64decode(message.get("data") or "", validate=True)
        job = AgentJob.model_validate_json(raw)
    except (binascii.Error, ValidationError, ValueError) as exc:
        raise InvalidEvent(f"invalid agent job: {exc}") from exc
    return job, str(message.get("messageId") or message.get("message_id") or "")


def trace_of(data: object) -> str | None:
    """The turn's trace header, carried as the Pub/Sub message's ``trace`` attribute."""
    message = data.get("message") if isinstance(data, dict) else None
    attributes = message.get("attributes") if isinstance(message, dict) else None
    trace = attributes.get("trace") if isinstance(attributes, dict) else None
    return trace if isinstance(trace, str) else None


class AgentJobService:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    def run(self, job: AgentJob, message_id: str) -> JobOutcome:
        now = self._deps.clock.now()
        if self._too_old(job.created_at, now):
            log.warning(
                "dropping expired job", extra={"job_id": job.job_id, "message_id": message_id}
            )
            return JobOutcome(job.job_id, "expired")
        key = f"agent-job:{job.job_id}"
        ttl = self._deps.settings.idempotency_ttl_days * 86400
        if not self._deps.idempotency.claim(key, now, ttl):
            log.info("job already claimed", extra={"job_id": job.job_id, "message_id": message_id})
            return JobOutcome(job.job_id, "duplicate")
        try:
            text = self._execute(job)
            self._deps.conversations.append_message(
                job.user_id,
                job.chat_id,
                Message(
                    id=f"{job.job_id}-result",
                    role="assistant",
                    text=text,
                    created_at=self._deps.clock.now(),
                    turn_id=job.turn_id,
                ),
            )
        except BaseException:
            self._deps.idempotency.release(key)
            raise
        return JobOutcome(job.job_id, "done")

    def _too_old(self, created_at: datetime, now: datetime) -> bool:
        return (now - created_at).total_seconds() > self._deps.settings.max_event_age_seconds

    def _execute(self, job: AgentJob) -> str:
        # The default agent until the agent registry lands: one model call on the goal.
        request = LLMRequest(
            system=f"You are the {job.agent} agent of a personal assistant. Do the task; "
            "reply with the result only.",
            messages=[ChatTurn(role="user", text=job.goal)],
        )
        return self._deps.llm.generate(request).text.strip()
