"""What an agent and its tools declare: the contract between the registry, the tools and
the job runner (``functions/agents``).

An agent works in steps: each step is one structured model call that either calls one of
the agent's tools or finishes with an answer. Tools do the real work on the user's own data
through ports; a tool marked ``sensitive`` (send, pay, delete, publish, share) never runs
without the user's approval, and receives an idempotency key so a redelivered job cannot
repeat it. A ``deterministic`` agent (greeting, feedback) makes no model call: the runner
calls its ``respond`` rule instead.

What an agent may hand back is whitelisted: ``AgentOutput`` (text, and figures in
``data``), nothing else of the conversation's state.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shared.ports import (
    AgentDataStore,
    Clock,
    Embedder,
    FactStore,
    Outbox,
    ProfileStore,
    ReminderBook,
    WebSearch,
)

Role = Literal[
    "planner", "researcher", "executor", "analyst", "writer", "reviewer", "front_desk"
]  # fmt: skip
DEFAULT_MAX_STEPS = 6


class AgentPorts(Protocol):
    """The stores a tool may use (``shared.deps.Deps`` satisfies it)."""

    @property
    def clock(self) -> Clock: ...

    @property
    def facts(self) -> FactStore: ...

    @property
    def embedder(self) -> Embedder: ...

    @property
    def profiles(self) -> ProfileStore: ...

    @property
    def agent_data(self) -> AgentDataStore: ...

    @property
    def outbox(self) -> Outbox: ...

    @property
    def reminder_book(self) -> ReminderBook: ...

    @property
    def web_search(self) -> WebSearch | None:
        """None when no provider is configured: ``web_search`` is then not offered."""
        ...


@dataclass(frozen=True)
class ToolContext:
    user_id: str
    chat_id: str
    job_id: str
    subtask_id: str
    ports: AgentPorts
    # thread + interrupt id of the approval, for sensitive tools; None for the others
    idempotency_key: str | None = None
    step: int = 0  # the agent's step (0, 1, ...) that calls the tool

    def record_id(self, kind: str) -> str:
        """The id of a record this call writes: the same for a replay of the same step of
        the same job, so a redelivered job rewrites its records instead of adding more."""
        raw = "\x1f".join((self.job_id, self.subtask_id, str(self.step), kind))
        return hashlib.sha256(raw.encode()).hexdigest()[:32]


class Tool(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str:
        """What the agent's model reads."""
        ...

    @property
    def args_schema(self) -> type[BaseModel]: ...

    @property
    def sensitive(self) -> bool: ...

    @property
    def acts(self) -> bool:
        """Changes the user's data or the world (what human-in-command approves first);
        every sensitive tool acts, tools that only read do not."""
        ...

    def available(self, ports: AgentPorts) -> bool:
        """False when what the tool needs is not configured: the runner does not offer it."""
        ...

    def run(self, context: ToolContext, args: BaseModel) -> str:
        """Do the work; return a short JSON or text result for the agent's next step.

        Raises ``shared.errors.DependencyUnavailable`` for retryable failures and
        ``ToolRefused`` for permanent ones (bad arguments, missing data)."""
        ...


class ToolRefused(Exception):
    """A permanent tool failure: the agent sees the reason and may try something else."""


def parse_args(tool: Tool, raw: Mapping[str, Any]) -> BaseModel:
    """The model's arguments for ``tool``, validated; ``ToolRefused`` naming what is wrong."""
    try:
        return tool.args_schema.model_validate(dict(raw))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'arguments'}: {error['msg']}"
            for error in exc.errors()[:5]
        )
        raise ToolRefused(f"{tool.name}: {problems}") from exc


class AgentInput(BaseModel):
    """What every agent is given: the step's goal and the results of the steps it needs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    goal: str = Field(min_length=1, max_length=2000, pattern=r"\S")
    earlier: dict[str, str] = Field(default_factory=dict, max_length=9)  # step id -> result


class AgentOutput(BaseModel):
    """What an agent hands back (the whitelist): the text posted to the chat, and figures."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = Field(min_length=1, max_length=8000)
    data: dict[str, Any] = Field(default_factory=dict)


Respond = Callable[[ToolContext, AgentInput], AgentOutput]


@dataclass(frozen=True)
class AgentSpec:
    name: str
    role: Role
    description: str  # what the planner reads
    instructions: str  # the agent's own system prompt
    tools: tuple[str, ...] = ()
    inline: bool = False  # runs inside the turn (one model call), not as a job
    deterministic: bool = False  # answers by rules, no model call (greeting, feedback)
    input_schema: dict[str, Any] = field(default_factory=AgentInput.model_json_schema)
    output_schema: dict[str, Any] = field(default_factory=AgentOutput.model_json_schema)
    # Set by the registry from its tools (never by hand): any sensitive tool -> True.
    needs_approval: bool = False
    plannable: bool = True  # offered to the global planner (catalogue())
    max_steps: int = DEFAULT_MAX_STEPS  # model calls the runner allows one job of it
    respond: Respond | None = None  # the rule of a deterministic agent

    def __post_init__(self) -> None:
        if self.deterministic != (self.respond is not None):
            raise ValueError(f"{self.name}: a deterministic agent has a respond rule, only it")
        if self.deterministic and self.inline:
            raise ValueError(f"{self.name}: inline agents make a model call")
