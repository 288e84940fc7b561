"""Stage 6, planning and execution for complex requests.

``global_planner`` makes one structured plan: ordered steps, each naming an agent of the
registry with its goal and the steps it depends on. An explicit command the understanding
tier read ("remind me to ... at ...") comes with its plan and the tool call spelled out: it
goes through the same contract (known agents, ordered steps, a call its agent may make with
arguments its tool accepts) and the same approvals, without a model call.
``agent_execution`` handles one ready step per pass (the loop is the "more agents?" edge):
a short agent runs inline while the turn's budget allows, a long one becomes a Pub/Sub job
(published by ``message_persist``), and an agent that acts for the user first asks for
approval, which ends the turn; the answer continues here.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field, JsonValue, ValidationError, field_validator, model_validator

from shared.agents.registry import AGENTS, TOOLS, catalogue
from shared.agents.spec import ToolRefused, parse_args
from shared.conversation.answers import APPROVE, EDIT, REJECT
from shared.conversation.phrases import phrase
from shared.graph import choices, plan_history
from shared.graph.context import TurnContext
from shared.graph.instrument import node
from shared.graph.questions import ask
from shared.graph.readings import read_now, reads_only
from shared.graph.routing import MAX_PLAN_STEPS, more_steps, next_step_ids, planning_entry
from shared.graph.state import (
    Conversation,
    Hitl,
    Planning,
    PlanStep,
    ResumePoint,
    StepResult,
    TurnState,
    merge,
)
from shared.models.trust import ActionContext
from shared.models.wire import Interrupt, InterruptOption
from shared.ports import ChatTurn, LLMRequest
from shared.services.hitl import call_needs_approval, escalation_for
from shared.services.structured import structured_with_retry

log = logging.getLogger("planning")
RESPONSE_RESERVE = 3000  # tokens kept for the reply: beyond it, inline work is published


class PlannedStep(BaseModel):
    # Closed sets as enums (Gemini enforces enums, not patterns): step ids, registry agents.
    id: Literal["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9"]
    agent: str = Field(json_schema_extra={"enum": list[JsonValue](sorted(AGENTS))})
    goal: str = Field(min_length=3, max_length=500)
    depends_on: list[str] = Field(default_factory=list)

    @field_validator("agent")
    @classmethod
    def _known_agent(cls, value: str) -> str:
        if value not in AGENTS:
            raise ValueError(f"unknown agent {value!r}")
        return value


class Plan(BaseModel):
    steps: list[PlannedStep] = Field(min_length=1, max_length=MAX_PLAN_STEPS)

    @model_validator(mode="after")
    def _ordered_dependencies(self) -> Plan:
        seen: set[str] = set()
        for step in self.steps:
            if step.id in seen or not set(step.depends_on) <= seen:
                raise ValueError("ids must be unique and depend on earlier steps only")
            seen.add(step.id)
        return self


@node("global_planner")
def global_planner(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    understood = _understood_plan(state)  # an explicit command's plan: no model call
    if understood is not None:
        return {"planning": understood}
    advice = plan_history.consult(runtime.context, state)  # past executions, before the model
    if advice.source == "reused":  # no planning call; approvals are still asked
        return {"planning": plan_history.reused_planning(runtime.context, advice)}
    memory = "\n".join(
        f"{who}: {'; '.join(facts)}" for who, facts in state.memory.facts_by_entity.items()
    )
    request = LLMRequest(
        kind="planning",
        system="Plan the user's request as ordered steps for these agents (ids s1, s2, ...; "
        f"depends_on lists earlier ids whose results a step needs):\n{catalogue()}"
        + (f"\n\nWhat you know:\n{memory}" if memory else "")
        + plan_history.prompt_for(advice),
        messages=[ChatTurn(role="user", text=state.conversation.focus)],
        max_output_tokens=400,
        temperature=0.0,
    )
    plan, _ = structured_with_retry(runtime.context.llm, request, Plan)
    steps = [
        PlanStep(id=s.id, agent=s.agent, inputs={"goal": s.goal}, depends_on=s.depends_on)
        for s in plan.steps
    ]
    note = plan_history.advice_note(runtime.context, advice, steps)
    return {"planning": Planning(steps=steps, results=[], advice=note)}


def _understood_plan(state: TurnState) -> Planning | None:
    """The understanding tier's plan (``Intent.planned``) if it keeps the planner's contract;
    None: the model plans (a plan the contract refuses is a bug of the tier's rules)."""
    steps = state.intent.planned if state.intent else []
    if not steps:
        return None
    try:
        Plan(
            steps=[
                PlannedStep(
                    id=s.id, agent=s.agent, goal=s.inputs.get("goal", ""), depends_on=s.depends_on
                )
                for s in steps
            ]
        )
        for step in steps:
            if step.call is not None:
                if step.call.tool not in AGENTS[step.agent].tools:
                    raise ToolRefused(f"{step.agent} has no tool {step.call.tool}")
                for call in step.call.completions():  # valid whichever option is picked
                    parse_args(TOOLS[call.tool], call.args)
    except (ValidationError, ToolRefused) as exc:
        log.warning("the understanding tier's plan broke the contract", extra={"error": str(exc)})
        return None
    return Planning(steps=list(steps), results=[])


@node("agent_execution")
def agent_execution(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    restored = _after_approval(state) or {}
    if restored:
        _remember_choice(runtime.context, state)
    current = state.model_copy(
        update={key: merge(getattr(state, key), value) for key, value in restored.items()}
    )
    return {**restored, **_execute_next(current, runtime, current.planning)}


def _execute_next(
    state: TurnState, runtime: Runtime[TurnContext], planning: Planning
) -> dict[str, Any]:
    ready = [s for s in planning.steps if s.id in _ready(planning)]
    if not ready:
        return {"planning": planning}
    step = ready[0]
    spec = AGENTS[step.agent]
    unmet = {r.step_id for r in planning.results if r.status in ("refused", "skipped")}
    if unmet & set(step.depends_on):  # what it needs will not come
        result = StepResult(step_id=step.id, status="skipped")
        return {"planning": planning.model_copy(update={"results": [*planning.results, result]})}
    if step.id not in planning.approved and _needs_approval(runtime.context, step):
        return {"planning": planning, "hitl": _ask_approval(state, runtime.context, planning, step)}
    if reads_only(step):  # "what are my reminders": read now, said in the reply
        result = StepResult(step_id=step.id, status="done", output=read_now(runtime.context, step))
    elif spec.inline and runtime.context.meter.remaining > RESPONSE_RESERVE:
        output = _run_inline(planning, runtime, step)
        result = StepResult(step_id=step.id, status="done", output=output)
    else:
        result = StepResult(step_id=step.id, status="published")
    return {"planning": planning.model_copy(update={"results": [*planning.results, result]})}


def _needs_approval(context: TurnContext, step: PlanStep) -> bool:
    """Steps of agents that act for the user (a sensitive tool) go through the user's HITL
    policy (``shared.services.hitl``), which has a sensitive action approved first in every
    mode. Agents that only read and write text run unasked; their own sensitive tool calls
    are escalated again, one by one, by the job runner. A step whose call is known (an
    explicit command) is asked about under that call's own policy, and once approved the
    job makes it without asking again; one with a value left open is always asked."""
    ports = context.ports
    if step.call is not None and step.call.open is not None:  # a value the user must pick
        return True
    if step.call is not None:  # the very call is known: the policy of that tool
        tool = TOOLS[step.call.tool]
        return call_needs_approval(ports.trust, ports.settings, context.user_id, step.agent, tool)
    if not AGENTS[step.agent].needs_approval:
        return False
    action = ActionContext(agent=step.agent, tool="plan_step", sensitive=True, confidence=1.0)
    decision = escalation_for(ports.trust, ports.settings, context.user_id, action)
    return decision is not None and decision.escalation == "approve"


def _ready(planning: Planning) -> list[str]:
    return next_step_ids(TurnState(planning=planning))


def _after_approval(state: TurnState) -> dict[str, Any] | None:
    """On an approval answer: the asked turn's message, intent and plan, with the decision."""
    pending = state.hitl.pending
    if state.planning.steps or pending is None or state.hitl.outcome != "answered":
        return None
    point = ResumePoint.model_validate(pending.resume_at)
    earlier = [
        r.model_copy(update={"status": "sent"}) if r.status == "published" else r
        for r in point.results
    ]  # published by the asking turn: never twice
    planning = Planning(steps=point.steps, results=earlier, advice=point.advice)
    if state.hitl.option_id == EDIT and point.step_id:  # approved, as the user rewrote it
        goal = state.conversation.user_message
        steps = [_with_goal(s, goal) if s.id == point.step_id else s for s in point.steps]
        planning = planning.model_copy(update={"steps": steps, "approved": [point.step_id]})
    elif state.hitl.option_id == APPROVE and point.step_id:
        planning = planning.model_copy(update={"approved": [point.step_id]})
    elif picked := choices.picked(state.hitl.option_id):  # approved, with the value picked
        steps = [choices.filled(s, picked) if s.id == point.step_id else s for s in point.steps]
        planning = planning.model_copy(update={"steps": steps, "approved": [point.step_id]})
    else:
        refused = StepResult(step_id=point.step_id or "", status="refused")
        planning = planning.model_copy(update={"results": [*earlier, refused]})
    focus = Conversation(
        focus=point.focus,
        focus_message_id=point.focus_message_id,
        focus_turn_id=point.focus_turn_id,
    )
    return {"planning": planning, "intent": point.intent, "conversation": focus}


def _remember_choice(context: TurnContext, state: TurnState) -> None:
    assert state.hitl.pending is not None
    point = ResumePoint.model_validate(state.hitl.pending.resume_at)
    asked = next((s for s in point.steps if s.id == point.step_id), None)
    if asked is not None:
        choices.remember(context.ports, context.user_id, asked, state.hitl.option_id)


def _with_goal(step: PlanStep, goal: str) -> PlanStep:
    """The user's words replace the goal; a call read from the old words is dropped."""
    return step.model_copy(update={"inputs": {**step.inputs, "goal": goal}, "call": None})


def _ask_approval(
    state: TurnState, context: TurnContext, planning: Planning, step: PlanStep
) -> Hitl:
    language = state.conversation.language
    goal = step.inputs.get("goal", "")
    question = phrase("approve", language, goal=goal)
    options = [InterruptOption(id=APPROVE, label=phrase("yes", language))]
    if step.call is not None and step.call.open is not None:  # yes means picking the value
        question, options = choices.question(step.call.open, language, goal)
    interrupt = Interrupt(
        id=f"{context.turn_id}-a{step.id}",
        kind="approval",
        question=question,
        options=[
            *options,
            InterruptOption(id=REJECT, label=phrase("no", language)),
            InterruptOption(id=EDIT, label=phrase("edit", language)),
        ],
    )
    return ask(
        state,
        context,
        interrupt,
        steps=planning.steps,
        results=planning.results,
        step_id=step.id,
        advice=planning.advice,
    )


def _run_inline(planning: Planning, runtime: Runtime[TurnContext], step: PlanStep) -> str:
    spec = AGENTS[step.agent]
    earlier = {r.step_id: r.output for r in planning.results if r.output}
    inputs = "\n".join(f"Result of {d}: {earlier[d]}" for d in step.depends_on if d in earlier)
    request = LLMRequest(
        kind="planning",
        system=spec.instructions,
        messages=[ChatTurn(role="user", text=f"{step.inputs.get('goal', '')}\n{inputs}".strip())],
        max_output_tokens=600,
    )
    return runtime.context.llm.generate(request).text.strip()


def build(checkpointer: bool | None = False) -> Any:
    """``checkpointer=False``: the turn's thread is checkpointed by the parent graph only."""
    graph = StateGraph(TurnState, context_schema=TurnContext)
    graph.add_node("global_planner", global_planner)
    graph.add_node("agent_execution", agent_execution)
    graph.add_conditional_edges(START, planning_entry, ["global_planner", "agent_execution"])
    graph.add_edge("global_planner", "agent_execution")
    graph.add_conditional_edges("agent_execution", more_steps, ["agent_execution", "__end__"])
    return graph.compile(name="planning", checkpointer=checkpointer)
