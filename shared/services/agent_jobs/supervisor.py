"""The supervisor: runs a claimed job's subtasks as a DAG until the job ends, waits or stops.

Ready subtasks (prerequisites settled) run in parallel on a thread pool (Cloud Functions
are synchronous); a subtask starts when its prerequisites are done and gets their results.
Each finished, failed or suspended subtask is checkpointed to the job document under the
lease, so a redelivery never redoes it. The supervisor is the subtasks' ``Team``: it counts
tokens against the job's budget, keeps the mailbox, recruits helpers (team cap, budget),
runs the watchdog, and stops everyone between steps when the job aborts (failure
threshold, budget, a required action refused) or the user pauses or cancels.

``run`` returns the state with the status this run ends in; ``shared.app.agent_delivery``
reports it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from shared.agents.spec import Tool
from shared.models.agent_data import WebFindings, https_sources
from shared.models.jobs import JobInterrupt, JobState, MailboxMessage, StepRecord
from shared.ports import Usage
from shared.services.agent_jobs import claims, jobstate, reports, watchdog
from shared.services.agent_jobs.catalog import Catalog
from shared.services.agent_jobs.loop import AgentLoop, Assignment, Finished, SubtaskFailed, Suspend
from shared.services.agent_jobs.needs import JobToolPorts, SupervisorPorts
from shared.services.agent_jobs.policy import failure_limit
from shared.services.hitl import call_needs_approval
from shared.services.model_work import for_work

log = logging.getLogger("agents")


class Supervisor:
    def __init__(
        self,
        deps: SupervisorPorts,
        catalog: Catalog,
        state: JobState,
        owner: str,
        sleep: Callable[[float], None],
        rand: Callable[[], float],
    ) -> None:
        self._deps, self._settings, self._catalog = deps, deps.settings, catalog
        self._state, self._owner = state, owner
        self._changed = threading.Condition(threading.RLock())
        self._running: set[str] = set()
        # pause | cancel | user_abort (the user); abort | budget | required (the policy);
        # lost (another run took over); error (a bug or a store outage)
        self._stop: str | None = None
        self._error: BaseException | None = None
        self._seen: dict[str, int] = {}
        self._answers: dict[str, JobInterrupt] = {}
        self._llm = for_work(deps.llm, "agent")  # background: behind the users' turns
        tool_ports = JobToolPorts(deps, state.job.created_at)  # erasure-fenced writes
        self._loop = AgentLoop(self._llm, tool_ports, deps.settings, self, sleep, rand)

    @property
    def stop(self) -> str | None:
        return self._stop

    def run(self) -> JobState:
        self._take_answer()
        self._stop = self._stop or self._read_control()
        workers = min(self._settings.agent_parallelism, self._settings.agent_team_cap)
        with ThreadPoolExecutor(max_workers=workers) as pool, self._changed:
            while True:
                if self._stop is None:
                    for sid in jobstate.ready(self._state):
                        attempts = self._state.subtask(sid).attempts + 1
                        self._update(sid, status="running", attempts=attempts)
                        self._running.add(sid)
                        pool.submit(self._work, sid)
                if not self._running:
                    break
                self._changed.wait()
        if self._error is not None:
            raise self._error
        return self._end()

    # -- one subtask ------------------------------------------------------------------------
    def _work(self, sid: str) -> None:
        try:
            self._run_one(sid)
        except claims.LeaseLost:
            self._halt("lost")
        except BaseException as error:  # a bug or a store outage: the delivery fails
            with self._changed:
                self._error = self._error or error
            self._halt("error")
        finally:
            with self._changed:
                self._running.discard(sid)
                self._changed.notify_all()

    def _run_one(self, sid: str) -> None:
        with self._changed:
            current = self._state.subtask(sid)
            spec = self._catalog.agent(current.subtask.agent)
            task = Assignment(
                job=self._state.job,
                subtask=current.subtask,
                spec=spec,
                tools=self._catalog.tools(spec, self._deps),
                earlier=jobstate.earlier_results(self._state, current.subtask),
                steps=tuple(current.steps),
                pending=current.pending,
                answer=self._answers.pop(sid, None),
                helpers=self._catalog.helpers(),
            )
        try:
            finished = self._loop.run(task)
        except Suspend as suspended:
            self._suspended(sid, suspended, task)
        except SubtaskFailed as failure:
            self._failed(sid, failure)
        else:
            self._done(sid, finished)

    def _done(self, sid: str, finished: Finished) -> None:
        text = finished.text[: jobstate.RESULT_CHARS]
        if len(self._state.subtasks) > 1:  # posted first: a crash before the save reposts nothing
            reports.progress(self._deps, self._state, sid, text)
        with self._changed:
            current = self._state.subtask(sid)
            self._update(
                sid,
                status="done",
                result=text,
                steps=[],
                pending=None,
                attempts=current.attempts + finished.retries,
            )
            if current.recruited_by:
                note = f"Result of your helper {sid}: {text[:2000]}"
                self.post(sid, current.recruited_by, note)
            self._save()

    def _failed(self, sid: str, failure: SubtaskFailed) -> None:
        log.warning(
            "subtask failed",
            extra={"job_id": self._state.job.job_id, "subtask": sid, "error": failure.error},
        )
        with self._changed:
            attempts = self._state.subtask(sid).attempts + failure.retries
            self._update(
                sid,
                status="failed",
                error=failure.error[:500],
                steps=[],
                pending=None,
                transient=failure.transient,
                attempts=attempts,
            )
            count = len(jobstate.failed(self._state))
            limit = failure_limit(self._state.job.job_type, len(self._state.subtasks))
            if failure.fatal:
                self._halt("required")
            elif failure.error.startswith("budget_exceeded"):
                self._halt("budget")
            elif count >= limit:
                self._halt("abort")
            self._save()

    def _suspended(self, sid: str, suspended: Suspend, task: Assignment) -> None:
        with self._changed:
            if suspended.reason == "stop":  # resumes later from here (an unused answer too)
                unused = suspended.pending
                self._update(
                    sid,
                    status="pending",
                    steps=suspended.steps,
                    pending=unused,
                    keep_interrupt=unused is not None,
                )
            else:
                self._update(
                    sid, status="waiting", steps=suspended.steps, pending=suspended.pending
                )
            self._save()

    # -- Team: what the subtasks ask of their supervisor ------------------------------------
    def needs_approval(self, agent: str, tool: Tool) -> bool:
        user = self._state.job.user_id
        return call_needs_approval(self._deps.trust, self._settings, user, agent, tool)

    def stop_reason(self, subtask_id: str) -> str | None:
        if self._stop is None:
            control = self._read_control()
            if control is not None:
                self._halt(control)
        return self._stop

    def spend(self, usage: Usage) -> bool:
        with self._changed:
            used = self._state.tokens_used + usage.input_tokens + usage.output_tokens
            queries = self._state.web_queries_used + usage.search_queries
            update = {"tokens_used": used, "web_queries_used": queries}
            self._state = self._state.model_copy(update=update)
            within = used <= self._budget()
            if usage.search_queries:  # past the cap only more searches are refused
                within = within and queries <= self._settings.agent_job_max_web_queries
            return within

    def cite(self, subtask_id: str, found: WebFindings) -> None:
        with self._changed:
            current = self._state.subtask(subtask_id)
            pairs = [(s.title, s.uri) for s in [*current.sources, *found.sources]]
            html = current.search_suggestions_html or found.suggestions_html
            self._update(
                subtask_id,
                keep_interrupt=True,
                sources=https_sources(pairs),
                search_suggestions_html=html,
            )

    def inbox(self, subtask_id: str) -> list[MailboxMessage]:
        with self._changed:
            news = jobstate.unread(self._state, subtask_id, self._seen.get(subtask_id, 0))
            self._seen[subtask_id] = self._state.mail_seq
            return news

    def notes(self, subtask_id: str) -> list[str]:
        with self._changed:
            self._state, notes = jobstate.take_notes(self._state, subtask_id)
            return notes

    def post(self, sender: str, to: str, text: str) -> str:
        with self._changed:
            if to != "*" and all(s.subtask.id != to for s in self._state.subtasks):
                return f"refused: no teammate {to!r}"
            now, size = self._deps.clock.now(), self._settings.agent_mailbox_size
            self._state = jobstate.post(self._state, sender, to, text[:2000], now, size)
            return "sent"

    def recruit(self, sender: str, agent: str, goal: str) -> str:
        with self._changed:
            cap = self._settings.agent_team_cap
            if len(self._state.subtasks) >= cap:
                return f"refused: the team is full ({cap} subtasks)"
            if self._budget() - self._state.tokens_used < self._settings.agent_recruit_min_tokens:
                return "refused: the job's token budget is nearly spent"
            if agent not in self._catalog.helpers() or not goal.strip():
                return f"refused: name one of {', '.join(self._catalog.helpers())} and a goal"
            self._state, helper = jobstate.recruit(self._state, sender, agent, goal.strip())
            self._save()
            self._changed.notify_all()
            return f"recruited {helper}: its result comes to your mailbox"

    def watch(self, subtask_id: str, goal: str, steps: Sequence[StepRecord]) -> bool:
        if not watchdog.due(len(steps), self._settings.watchdog_every_steps):
            return False
        window = steps[-self._settings.watchdog_window_steps :]
        verdict, note, usage = watchdog.evaluate(self._llm, goal, window)
        self.spend(usage)
        with self._changed:
            now = self._deps.clock.now()
            self._state, level = watchdog.climb(self._state, subtask_id, verdict, note, now)
        job = self._state.job
        about = {"job_id": job.job_id, "subtask_id": subtask_id, "verdict": verdict}
        log.info("watchdog", extra={**about, "level": level})
        if level < watchdog.ESCALATE_AT:
            return False
        alert = {**about, "user_id": job.user_id, "steps": len(steps)}
        self._deps.operator_alerts.alert("agent_escalation", alert)
        return True

    # -- state, checkpoints, the end ----------------------------------------------------------
    def _update(self, sid: str, keep_interrupt: bool = False, **changes: Any) -> None:
        self._state = jobstate.with_subtask(self._state, sid, **changes)
        answered = self._state.interrupt
        settled = changes.get("status") in ("done", "failed", "waiting", "pending")
        mine = answered is not None and answered.subtask_id == sid and answered.option_id
        if mine and settled and not keep_interrupt:  # the answer is used up
            self._state = self._state.model_copy(update={"interrupt": None})

    def _budget(self) -> int:
        return self._state.job.budget_tokens or self._settings.agent_job_token_budget

    def _halt(self, reason: str) -> None:
        with self._changed:
            self._stop = self._stop or reason
            self._changed.notify_all()

    def _take_answer(self) -> None:
        """Apply the answer the claim recorded: the subtask that asked runs again."""
        self._state, answer, stop = jobstate.take_answer(self._state)
        if answer is not None:
            self._answers[answer.subtask_id] = answer
        self._stop = self._stop or stop

    def _read_control(self) -> str | None:
        stored = self._deps.jobs.get(self._state.job.user_id, self._state.job.job_id)
        if stored is None or stored.lease_owner != self._owner:
            return "lost"
        return None if stored.control == "none" else stored.control

    def _save(self) -> None:
        self._state, control = claims.save(self._deps, self._state, self._owner)
        if control != "none":
            self._halt(control)

    def _end(self) -> JobState:
        return self._state if self._stop == "lost" else jobstate.ending(self._state, self._stop)
