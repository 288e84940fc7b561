"""One subtask's agent loop: structured steps until the agent finishes.

Each step is one model call that calls a tool, finishes, messages a teammate, recruits a
helper or asks the user. A transient error (model, store or tool unavailable) repeats the
step after a backoff with jitter, up to ``agent_subtask_retries`` times for the subtask;
then the subtask fails as transient. A sensitive tool call, a question and a watchdog
escalation suspend the subtask with its transcript, so the answer continues it where it
stopped. Between steps the team (the supervisor) may stop it: paused, cancelled, aborted.
A subtask whose call is already known (``Subtask.call``: the plan read an explicit command)
makes that call without a model step, asking first unless the user approved it in the turn,
and finishes with what it did.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from shared.agents.spec import (
    AgentInput,
    AgentPorts,
    AgentSpec,
    Tool,
    ToolContext,
    ToolRefused,
    parse_args,
)
from shared.config import Settings
from shared.errors import AccountErased, AppError, ModelOutputInvalid
from shared.models.agent_data import WebFindings
from shared.models.jobs import (
    AgentJob,
    JobInterrupt,
    MailboxMessage,
    PendingAction,
    StepRecord,
    Subtask,
)
from shared.ports import LLM, Usage
from shared.services.agent_jobs.interrupts import APPROVE
from shared.services.agent_jobs.policy import backoff_seconds, is_transient
from shared.services.agent_jobs.prompts import AgentStep, news_text, step_request
from shared.services.structured import structured_with_retry

TOOL_RESULT_CHARS = 4000  # of a tool's result, as kept in the transcript
DECLINED = "The user declined this action: do not try it again; go on without it."


class Team(Protocol):
    """What a subtask's loop asks of its supervisor."""

    def stop_reason(self, subtask_id: str) -> str | None: ...

    def spend(self, usage: Usage) -> bool:
        """Count tokens; False once the job's budget is spent."""
        ...

    def cite(self, subtask_id: str, found: WebFindings) -> None:
        """Keep the web sources (and search suggestions) the subtask's answer rests on."""
        ...

    def inbox(self, subtask_id: str) -> list[MailboxMessage]: ...

    def notes(self, subtask_id: str) -> list[str]: ...

    def post(self, sender: str, to: str, text: str) -> str: ...

    def recruit(self, sender: str, agent: str, goal: str) -> str: ...

    def watch(self, subtask_id: str, goal: str, steps: Sequence[StepRecord]) -> bool:
        """Run the watchdog when due; True when it escalates (the subtask must pause)."""
        ...

    def needs_approval(self, agent: str, tool: Tool) -> bool:
        """Whether the user's HITL policy has this call approved first."""
        ...


class Suspend(Exception):
    """Not an error: the subtask stops here and keeps its transcript."""

    def __init__(
        self,
        reason: Literal["approval", "clarification", "escalation", "stop"],
        steps: list[StepRecord],
        pending: PendingAction | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason, self.steps, self.pending = reason, steps, pending


class SubtaskFailed(Exception):
    """The subtask ends without an answer (``transient``: every retry hit an outage)."""

    def __init__(
        self, error: str, transient: bool = False, retries: int = 0, fatal: bool = False
    ) -> None:
        super().__init__(error)
        self.error, self.transient, self.retries = error, transient, retries
        self.fatal = fatal  # the job cannot succeed without it (a required action refused)


@dataclass(frozen=True)
class Assignment:
    job: AgentJob
    subtask: Subtask
    spec: AgentSpec
    tools: tuple[Tool, ...]
    earlier: dict[str, str]
    steps: tuple[StepRecord, ...] = ()  # a suspended subtask's transcript
    pending: PendingAction | None = None
    answer: JobInterrupt | None = None  # the answered interrupt that resumes it
    helpers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Finished:
    text: str
    retries: int


class AgentLoop:
    def __init__(
        self,
        llm: LLM,
        ports: AgentPorts,
        settings: Settings,
        team: Team,
        sleep: Callable[[float], None],
        rand: Callable[[], float],
    ) -> None:
        self._llm, self._ports, self._settings = llm, ports, settings
        self._team, self._sleep, self._rand = team, sleep, rand

    def run(self, task: Assignment) -> Finished:
        sid, steps, retries = task.subtask.id, list(task.steps), 0
        answer = task.answer
        limit = min(task.spec.max_steps, self._settings.agent_max_steps)
        while True:
            if self._team.stop_reason(sid):  # an answer not yet used stays pending
                raise Suspend("stop", steps, task.pending if answer is not None else None)
            try:
                if task.spec.respond is not None:  # deterministic: a rule, no model call
                    return Finished(self._respond(task), retries)
                if task.pending is not None and answer is not None:
                    outcome: StepRecord | str = self._resolve(
                        task, task.pending, answer, len(steps)
                    )
                elif task.subtask.call is not None:
                    outcome = self._planned(task, steps)
                elif len(steps) >= limit:
                    raise SubtaskFailed(
                        f"step_limit: no answer after {limit} steps", retries=retries
                    )
                else:
                    outcome = self._step(task, steps)
            except AccountErased:  # the job stops at once: no retry can write anything
                raise
            except AppError as error:
                retries = self._back_off(error, retries)
                continue
            answer = None
            if isinstance(outcome, str):
                return Finished(outcome, retries)
            steps.append(outcome)
            if self._team.watch(sid, task.subtask.goal, steps):
                raise Suspend("escalation", steps)

    def _planned(self, task: Assignment, steps: list[StepRecord]) -> StepRecord | str:
        """The subtask's known call (made once: its record is the transcript), then what it
        did as the answer. No model call either way."""
        call = task.subtask.call
        assert call is not None
        if steps:
            result = steps[-1].result
            if result.startswith("refused:"):
                raise SubtaskFailed(f"tool_refused: {result.removeprefix('refused:').strip()}")
            return (
                "Not done: you declined it." if result == DECLINED else f"Done: {task.subtask.goal}"
            )
        tool = next((t for t in task.tools if t.name == call.tool), None)
        if tool is None:
            raise SubtaskFailed(f"tool_refused: {task.spec.name} has no tool {call.tool!r}")
        try:
            args = parse_args(tool, call.args).model_dump_json()
        except ToolRefused as refused:
            raise SubtaskFailed(f"tool_refused: {refused}") from refused
        if not call.approved and self._team.needs_approval(task.subtask.agent, tool):
            raise Suspend("approval", steps, PendingAction(tool=tool.name, args=args))
        key = f"{task.job.job_id}:{task.subtask.id}:planned" if call.approved else None
        result = self._call(task, tool, args, 0, key)
        return StepRecord(action="tool", tool=tool.name, args=args, result=result)

    def _back_off(self, error: AppError, retries: int) -> int:
        """Sleep before the next try of a transient failure; the subtask fails when it is
        permanent or the retries are used up."""
        reason = f"{error.code}: {error.message}"
        if not is_transient(error):
            raise SubtaskFailed(reason, retries=retries) from error
        if retries >= self._settings.agent_subtask_retries:
            raise SubtaskFailed(reason, transient=True, retries=retries) from error
        s = self._settings
        self._sleep(
            backoff_seconds(
                retries + 1, s.agent_retry_base_seconds, s.agent_retry_max_seconds, self._rand
            )
        )
        return retries + 1

    def _respond(self, task: Assignment) -> str:
        assert task.spec.respond is not None
        earlier = dict(list(task.earlier.items())[:9])
        inputs = AgentInput(goal=task.subtask.goal, earlier=earlier)
        return task.spec.respond(self._context(task, 0), inputs).text

    def _step(self, task: Assignment, steps: list[StepRecord]) -> StepRecord | str:
        """One model call and what it asks for: the answer (str) or the step's record."""
        sid = task.subtask.id
        news = news_text(self._team.inbox(sid), self._team.notes(sid))
        request = step_request(
            task.spec, task.job, task.subtask, task.tools, task.earlier, steps, news, task.helpers
        )
        try:
            step, usage = structured_with_retry(self._llm, request, AgentStep)
        except ModelOutputInvalid as error:
            raise SubtaskFailed(f"{error.code}: {error.message}") from error
        if not self._team.spend(usage):
            raise SubtaskFailed("budget_exceeded: the job spent its token budget")
        if step.action == "finish":
            return step.text.strip() or "(no answer)"
        if step.action == "message":
            sent = self._team.post(sid, step.to or "*", step.text)
            return StepRecord(action="message", text=step.text, args=step.to, result=sent)
        if step.action == "recruit":
            told = self._team.recruit(sid, step.agent, step.text)
            return StepRecord(action="recruit", tool=step.agent, text=step.text, result=told)
        if step.action == "ask":
            raise Suspend("clarification", steps, PendingAction(question=step.text))
        return self._tool_step(task, step, steps)

    def _tool_step(self, task: Assignment, step: AgentStep, steps: list[StepRecord]) -> StepRecord:
        record = StepRecord(action="tool", tool=step.tool, args=step.tool_args)
        tool = next((t for t in task.tools if t.name == step.tool), None)
        if tool is None:
            names = ", ".join(t.name for t in task.tools) or "none"
            return record.model_copy(update={"result": f"refused: no tool {step.tool!r} ({names})"})
        try:
            args = parse_args(tool, _json_object(step.tool_args))
        except ToolRefused as refused:
            return record.model_copy(update={"result": f"refused: {refused}"})
        canonical = args.model_dump_json()
        record = record.model_copy(update={"args": canonical})
        if self._team.needs_approval(task.subtask.agent, tool):
            raise Suspend("approval", steps, PendingAction(tool=tool.name, args=canonical))
        return record.model_copy(update={"result": self._call(task, tool, canonical, len(steps))})

    def _call(
        self, task: Assignment, tool: Tool, args: str, step: int, key: str | None = None
    ) -> str:
        try:
            parsed = parse_args(tool, json.loads(args))
            return tool.run(self._context(task, step, key), parsed)[:TOOL_RESULT_CHARS]
        except ToolRefused as refused:
            return f"refused: {refused}"

    def _resolve(
        self, task: Assignment, pending: PendingAction, answer: JobInterrupt, step: int
    ) -> StepRecord:
        """The suspended step, completed with the user's answer."""
        if pending.question:
            reply = answer.answer if answer.source == "user" and answer.answer else ""
            said = f"The user answered: {reply}" if reply else "No answer came; go on without it."
            return StepRecord(action="ask", text=pending.question, result=said)
        record = StepRecord(action="tool", tool=pending.tool, args=pending.args)
        tool = next((t for t in task.tools if t.name == pending.tool), None)
        if answer.option_id != APPROVE or tool is None:
            if task.subtask.required:
                raise SubtaskFailed(f"action_refused: {pending.tool} not approved", fatal=True)
            return record.model_copy(update={"result": DECLINED})
        key = f"{task.job.job_id}:{answer.id}"
        return record.model_copy(update={"result": self._call(task, tool, pending.args, step, key)})

    def _context(self, task: Assignment, step: int, key: str | None = None) -> ToolContext:
        job = task.job
        return ToolContext(
            job.user_id,
            job.chat_id,
            job.job_id,
            task.subtask.id,
            self._ports,
            idempotency_key=key,
            step=step,
            spend=self._team.spend,
            cite=lambda found: self._team.cite(task.subtask.id, found),
        )


def _json_object(raw: str) -> dict[str, object]:
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError as exc:
        raise ToolRefused(f"tool_args is not JSON: {exc.msg}") from exc
    if not isinstance(value, dict):
        raise ToolRefused("tool_args must be a JSON object")
    return value
