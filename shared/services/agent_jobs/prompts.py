"""What an agent's model sees at each step, and the one structured reply it gives.

The request is the agent's instructions with its role and tools (system), the subtask's goal
with the results it depends on (first user message), then its earlier steps and what came
back, and last whatever arrived since: teammates' mailbox messages and the watchdog's
private notes ("whispers"), which no one else sees.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from shared.agents.spec import AgentSpec, Tool
from shared.models.jobs import AgentJob, MailboxMessage, StepRecord, Subtask
from shared.ports import ChatTurn, LLMRequest

RESULT_CHARS = 2000  # of a tool result, as the agent sees it again
EARLIER_CHARS = 4000  # of a prerequisite's result


class AgentStep(BaseModel):
    """One step: call a tool, finish with the answer, or work with the team."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["tool", "finish", "message", "recruit", "ask"]
    tool: str = Field(default="", description="tool: the tool's name")
    tool_args: str = Field(default="{}", description="tool: its arguments, a JSON object")
    text: str = Field(
        default="",
        max_length=8000,
        description="finish: the answer; message: the note; recruit: the helper's goal; "
        "ask: the question for the user",
    )
    agent: str = Field(default="", description="recruit: the helper agent")
    to: str = Field(default="", description="message: a teammate's subtask id, or *")


def step_request(
    spec: AgentSpec,
    job: AgentJob,
    subtask: Subtask,
    tools: Sequence[Tool],
    earlier: dict[str, str],
    steps: Sequence[StepRecord],
    news: str,
    helpers: Sequence[str],
) -> LLMRequest:
    messages = [ChatTurn(role="user", text=_task_text(subtask, earlier))]
    for step in steps:
        messages.append(ChatTurn(role="assistant", text=_step_json(step)))
        messages.append(ChatTurn(role="user", text=f"Result: {step.result[:RESULT_CHARS]}"))
    if news:
        last = messages[-1]
        messages[-1] = ChatTurn(role="user", text=f"{last.text}\n\n{news}")
    return LLMRequest(
        kind="planning",
        system=_system(spec, job, subtask, tools, helpers),
        messages=messages,
        max_output_tokens=800,
        temperature=0.2,
    )


def news_text(inbox: Sequence[MailboxMessage], notes: Sequence[str]) -> str:
    parts = [f"Message from {m.sender}: {m.text}" for m in inbox]
    parts += [f"[Private note from your supervisor] {note}" for note in notes]
    return "\n".join(parts)


def _system(
    spec: AgentSpec,
    job: AgentJob,
    subtask: Subtask,
    tools: Sequence[Tool],
    helpers: Sequence[str],
) -> str:
    team = ", ".join(f"{s.id} ({s.agent}: {s.goal[:80]})" for s in job.subtasks)
    tool_lines = "\n".join(_tool_line(tool) for tool in tools) or "(none)"
    return (
        f"{spec.instructions}\n\n"
        f"You are the {subtask.role or spec.role} of a team working for the user on: "
        f"{job.goal or subtask.goal}\nYour part is subtask {subtask.id}. Team: {team}.\n\n"
        f"Your tools:\n{tool_lines}\n\n"
        'Reply with one step as JSON. action "tool": call a tool (tool, tool_args); '
        '"finish": your answer for the user (text); "message": a note to a teammate (to, '
        'text); "recruit": a helper for a new part of the work (agent, text: its goal; '
        f'agents: {", ".join(helpers) or "none"}); "ask": a question for the user, only '
        "when you cannot go on without their answer (text). Say only what your tools "
        "confirmed; do not repeat a call that gave the same result."
    )


def _tool_line(tool: Tool) -> str:
    schema = tool.args_schema.model_json_schema()
    fields = ", ".join(
        f"{name}: {prop.get('type', 'value')}"
        for name, prop in schema.get("properties", {}).items()
    )
    asks = " (asks the user first)" if tool.sensitive else ""
    return f"- {tool.name}{asks}: {tool.description} Arguments: {{{fields}}}"


def _task_text(subtask: Subtask, earlier: dict[str, str]) -> str:
    parts = [f"Goal: {subtask.goal}"]
    parts += [f"Input {key}: {value}" for key, value in subtask.inputs.items()]
    parts += [f"Result of {sid}: {text[:EARLIER_CHARS]}" for sid, text in earlier.items()]
    return "\n".join(parts)


def _step_json(step: StepRecord) -> str:
    data = {"action": step.action, "tool": step.tool, "tool_args": step.args, "text": step.text}
    return json.dumps({k: v for k, v in data.items() if v}, ensure_ascii=False)
