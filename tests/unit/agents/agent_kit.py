"""Scripted agents and tools for the job runner's unit tests.

``TeamModel`` is the one scripted model behind every agent of a job: it answers each
subtask from that subtask's own script (found by the ``Goal:`` line of its request), and
the watchdog from a queue of verdicts. An exhausted script finishes with ``done: <goal>``.
``ScriptedCatalog`` stands in for the registry with agents and tools a test defines.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from shared.agents.spec import AgentPorts, AgentSpec, Tool, ToolContext
from shared.app.agent_delivery import AgentJobService, JobOutcome
from shared.deps import Deps
from shared.errors import DependencyUnavailable
from shared.fakes.scripted_llm import Reply
from shared.models.jobs import AgentJob, JobState, JobType, Subtask
from shared.ports import LLMRequest
from shared.services.agent_jobs.prompts import AgentStep
from shared.services.agent_jobs.watchdog import WatchdogVerdict

Scripted = Reply | Callable[[LLMRequest], Reply]


def finish(text: str) -> dict[str, str]:
    return {"action": "finish", "text": text}


def call(tool: str, **args: Any) -> dict[str, str]:
    return {"action": "tool", "tool": tool, "tool_args": json.dumps(args)}


def recruit(agent: str, goal: str) -> dict[str, str]:
    return {"action": "recruit", "agent": agent, "text": goal}


def message(to: str, text: str) -> dict[str, str]:
    return {"action": "message", "to": to, "text": text}


def ask(question: str) -> dict[str, str]:
    return {"action": "ask", "text": question}


def noting(seen: list[str], reply: Reply, first: bool = False) -> Callable[[LLMRequest], Reply]:
    """``reply``, keeping what the agent was given: its first message or its last."""

    def answer(request: LLMRequest) -> Reply:
        seen.append(request.messages[0 if first else -1].text)
        return reply

    return answer


def goal_of(request: LLMRequest) -> str:
    first = request.messages[0].text if request.messages else ""
    return first.split("\n", 1)[0].removeprefix("Goal: ")


class TeamModel:
    def __init__(self) -> None:
        self._scripts: dict[str, deque[Scripted]] = {}
        self._verdicts: deque[dict[str, str]] = deque()
        self._others: deque[Reply] = deque()  # calls of anything but an agent or watchdog
        self._lock = threading.Lock()
        self.steps: list[str] = []  # the goal of every agent step, in call order
        self.watchdog_calls = 0

    def on(self, goal: str, *replies: Scripted) -> None:
        with self._lock:
            self._scripts.setdefault(goal, deque()).extend(replies)

    def others(self, *replies: Reply) -> None:
        with self._lock:
            self._others.extend(replies)

    def verdicts(self, *verdicts: str) -> None:
        with self._lock:
            self._verdicts.extend({"verdict": v, "note": ""} for v in verdicts)

    def handler(self, request: LLMRequest, schema: type[BaseModel] | None) -> Reply:
        with self._lock:
            if schema is WatchdogVerdict:
                self.watchdog_calls += 1
                return self._verdicts.popleft() if self._verdicts else {"verdict": "OK"}
            if schema is not AgentStep:
                return self._others.popleft()
            goal = goal_of(request)
            self.steps.append(goal)
            script = self._scripts.get(goal)
            reply = script.popleft() if script else finish(f"done: {goal}")
        return reply(request) if callable(reply) else reply


@dataclass
class EchoTool:
    """A tool that records its calls; ``outages`` first calls raise DependencyUnavailable."""

    name: str = "lookup"
    description: str = "Look something up."
    sensitive: bool = False
    acts: bool = False
    answer: str = "nothing new"
    outages: int = 0
    calls: list[tuple[str, str | None]] = field(default_factory=list)  # (args, key)

    @property
    def args_schema(self) -> type[BaseModel]:
        return LookupArgs

    def available(self, ports: AgentPorts) -> bool:
        return True

    def run(self, context: ToolContext, args: BaseModel) -> str:
        if self.outages > 0:
            self.outages -= 1
            raise DependencyUnavailable(f"{self.name} down")
        self.calls.append((args.model_dump_json(), context.idempotency_key))
        return self.answer


class LookupArgs(BaseModel):
    query: str = ""


def agent(name: str = "worker", tools: Iterable[str] = (), max_steps: int = 30) -> AgentSpec:
    return AgentSpec(
        name, "researcher", f"the {name} agent", f"You are {name}.", tuple(tools),
        max_steps=max_steps,
    )  # fmt: skip


class ScriptedCatalog:
    def __init__(self, agents: Iterable[AgentSpec] = (), tools: Iterable[Tool] = ()) -> None:
        self._agents = {spec.name: spec for spec in (agent(), agent("helper"), *agents)}
        self._tools = tuple(tools)

    def agent(self, name: str) -> AgentSpec:
        return self._agents.get(name, self._agents["worker"])

    def tools(self, spec: AgentSpec, ports: AgentPorts) -> tuple[Tool, ...]:
        return tuple(t for t in self._tools if t.name in spec.tools)

    def helpers(self) -> tuple[str, ...]:
        return tuple(self._agents)


def sub(
    sid: str, goal: str = "", after: Iterable[str] = (), agent: str = "worker", **extra: Any
) -> Subtask:
    return Subtask(id=sid, agent=agent, goal=goal or f"goal {sid}", depends_on=list(after),
                   **extra)  # fmt: skip


def make_job(
    now: datetime,
    *subtasks: Subtask,
    job_type: JobType = "default",
    job_id: str = "t1-job0",
    **extra: Any,
) -> AgentJob:
    return AgentJob(
        job_id=job_id, user_id="alice", chat_id="c1", turn_id="t1", goal="the user's request",
        subtasks=list(subtasks), job_type=job_type, created_at=now, **extra,
    )  # fmt: skip


@dataclass
class Runner:
    """Runs jobs as the agents function does, recording the backoff sleeps."""

    deps: Deps
    catalog: ScriptedCatalog
    sleeps: list[float] = field(default_factory=list)

    def run(self, job: AgentJob, message_id: str = "m-1") -> JobOutcome:
        service = AgentJobService(self.deps, self.catalog, self.sleeps.append, lambda: 0.5)
        return service.run(job, message_id)

    def published(self) -> list[AgentJob]:
        messages = self.deps.publisher.messages  # type: ignore[attr-defined]
        return [AgentJob.model_validate_json(m.data) for m in messages]

    def state(self, job_id: str = "t1-job0") -> JobState:
        state = self.deps.jobs.get("alice", job_id)
        assert state is not None
        return state

    def chat(self) -> dict[str, str]:
        return {m.id: m.text for m in self.deps.conversations.recent_messages("alice", "c1", 100)}

    def kinds(self) -> dict[str, tuple[str, str | None]]:
        """What each message of the chat is: its kind and the question it asked."""
        messages = self.deps.conversations.recent_messages("alice", "c1", 100)
        return {m.id: (m.kind, m.question_id) for m in messages}
