"""Agent jobs delivered by Pub/Sub push (at least once): claim, run, report.

Idempotent: the job is claimed in its Firestore document before any work, a continuation
claims its interrupt id once (``claims``); finished subtasks are checkpointed there, so a
redelivery does nothing and a taken-over crash resumes where it stopped; messages to the
chat have ids derived from the job (``reports``). Events older than
``max_event_age_seconds`` are not run: logged, and the chat told so once (unless the job
ended already), since the turn said it had started.

Failures: an invalid payload can never succeed (``InvalidEvent``: the function logs it and
acknowledges). A store outage, a bug, a job held by a live run (``JobInProgress``) or
stalled by an outage (its aborting failures all transient) is answered non-2xx, so Pub/Sub
redelivers with backoff, and after ``agent_max_deliveries`` (the subscription's 5) moves
the message to the dead-letter topic; on that delivery a stalled job tells the user and the
operators. A question the chat cannot show yet (another interrupt waits) is retried the
same way, and answered as timed out on the last delivery instead of dead-lettering.

A finished job's execution is recorded for the planner's advisor before the job's last save
(``shared.services.history.recorder``), once per job.
"""

from __future__ import annotations

import base64
import binascii
import logging
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import ValidationError

from shared.deps import Deps
from shared.errors import AccountErased, DependencyUnavailable, InvalidEvent, JobInProgress
from shared.models.jobs import FINISHED, AgentJob, JobState
from shared.models.trust import Outcome
from shared.services.agent_jobs import claims, interrupts, reports
from shared.services.agent_jobs.catalog import Catalog, RegistryCatalog
from shared.services.agent_jobs.supervisor import Supervisor
from shared.services.history.recorder import RECORDED_STATUSES, record_execution
from shared.services.hitl import record_task_outcome
from shared.services.notify import events

ESCALATION_LEVEL = 3  # the watchdog's third rung: the job was paused and escalated
log = logging.getLogger("agents")


@dataclass(frozen=True)
class JobOutcome:
    job_id: str
    # done | aborted | cancelled | waiting | paused | duplicate | expired | unknown | superseded
    status: str


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
    def __init__(
        self,
        deps: Deps,
        catalog: Catalog | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self._deps, self._catalog = deps, catalog or RegistryCatalog()
        self._sleep, self._rand = sleep, rand

    def run(self, job: AgentJob, message_id: str) -> JobOutcome:
        ids = {"job_id": job.job_id, "message_id": message_id}
        age = (self._deps.clock.now() - job.created_at).total_seconds()
        if age > self._deps.settings.max_event_age_seconds:
            log.warning("dropping expired job", extra=ids)
            self._tell_expired(job)
            return JobOutcome(job.job_id, "expired")
        if self._erased_before(job):  # nothing may write the account again
            log.info("dropping a job of an erased account", extra=ids)
            return JobOutcome(job.job_id, "erased")
        owner = uuid.uuid4().hex
        try:
            claim = claims.claim(self._deps, job, owner)
        except AccountErased:  # the account is being (or was) erased since the job was made
            log.info("dropping a job of an erased account", extra=ids)
            return JobOutcome(job.job_id, "erased")
        if claim.outcome == "busy":
            raise JobInProgress(f"job {job.job_id} is running elsewhere")
        if claim.outcome != "claimed" or claim.state is None:
            log.info("job not run", extra={**ids, "claim": claim.outcome})
            return JobOutcome(job.job_id, claim.outcome)
        try:
            status = self._run_claimed(claim.state, owner)
        except claims.LeaseLost:
            status = "superseded"
        except AccountErased:  # erased while it ran: it stopped writing at once
            status = "erased"
        except BaseException:
            claims.release(self._deps, job, owner)
            raise
        log.info("agent job ran", extra={**ids, "status": status})
        return JobOutcome(job.job_id, status)

    def _tell_expired(self, job: AgentJob) -> None:
        """Unless the job ended already (a late redelivery of a finished job) or its
        account was erased: the chat's notice, once (its id is the job's)."""
        stored = self._deps.jobs.get(job.user_id, job.job_id)
        if (stored is not None and stored.status in FINISHED) or self._erased_before(job):
            return
        reports.expired(self._deps, job)

    def _erased_before(self, job: AgentJob) -> bool:
        status = self._deps.facts.task_status(job.user_id, f"agent-job:{job.job_id}")
        return status.erased_at is not None and job.created_at <= status.erased_at

    def _run_claimed(self, state: JobState, owner: str) -> str:
        for _ in range(2):  # a second pass after a question the chat could never show
            supervisor = Supervisor(
                self._deps, self._catalog, state, owner, self._sleep, self._rand
            )
            end = supervisor.run()
            if supervisor.stop == "lost":
                return "superseded"
            if end.status != "waiting":
                return self._finish(end, owner)
            state, shown = self._ask(end, owner)
            if shown:
                return "waiting"
        return self._finish(state, owner)

    def _ask(self, state: JobState, owner: str) -> tuple[JobState, bool]:
        """Show the next question; when the chat stays busy until the last delivery, take
        it as unanswered (a timeout) and let the job go on."""
        named = interrupts.next_interrupt(state)
        if named is None:
            return state, True
        state, asked = named
        state, _ = claims.save(self._deps, state, owner)  # named before shown
        if interrupts.show(self._deps, state, asked):
            shown = asked.model_copy(update={"opened": True})
            claims.save(self._deps, state.model_copy(update={"interrupt": shown}), owner, True)
            return state, True
        attempts = asked.open_attempts + 1
        if attempts < self._deps.settings.agent_max_deliveries - 1:
            retry = asked.model_copy(update={"open_attempts": attempts})
            claims.save(self._deps, state.model_copy(update={"interrupt": retry}), owner, True)
            raise JobInProgress("the chat waits on another question; the job asks later")
        timed_out = asked.model_copy(
            update={"option_id": interrupts.REJECT, "source": "timeout", "opened": False}
        )
        answered = [*state.answered, asked.id]
        return state.model_copy(update={"interrupt": timed_out, "answered": answered}), False

    def _count_for_trust(self, end: JobState) -> None:
        """After the one write that finished the job (its lease held): a done job is a
        success, an aborted one a failure, and one the watchdog had to escalate to the user
        a serious incident (the level drops; the user approves more again)."""
        escalated = any(w.level >= ESCALATION_LEVEL for w in end.whispers)
        outcomes: dict[str, Outcome] = {"done": "success", "aborted": "failure"}
        outcome = outcomes.get(end.status)
        if escalated and end.status in ("done", "aborted", "cancelled"):
            outcome = "serious_incident"
        if outcome is not None:
            now, trust = self._deps.clock.now(), self._deps.trust.fenced(end.job.created_at)
            record_task_outcome(trust, end.job.user_id, outcome, now)

    def _tell_the_user(self, end: JobState) -> None:
        """A job done or failed notifies (once: the task is named from the job)."""
        if end.status not in ("done", "aborted"):
            return
        job, deps = end.job, self._deps
        task = events.job_task(deps.settings, job.user_id, job.chat_id, job.job_id,
                               end.status == "done", job.goal, deps.clock.now())  # fmt: skip
        events.enqueue_quietly(deps.tasks, [task])

    def _finish(self, end: JobState, owner: str) -> str:
        if end.status in RECORDED_STATUSES:
            # Both before the final write, and both once however often they run: the
            # execution first, so a "that was wrong" to the result always finds it.
            record_execution(self._deps, end)
            reports.final(self._deps, end)
            self._tell_the_user(end)
        claims.save(self._deps, end, owner, release=True)
        self._count_for_trust(end)
        if end.status == "stalled":
            if end.deliveries >= self._deps.settings.agent_max_deliveries:
                reports.stalled(self._deps, end)
                self._deps.operator_alerts.alert(
                    "agent_job_stalled", {"job_id": end.job.job_id, "user_id": end.job.user_id}
                )
            raise DependencyUnavailable(f"agent job {end.job.job_id} stalled on an outage")
        return end.status
