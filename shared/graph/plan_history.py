"""The turn graph's side of learning from history (``shared.services.history``).

- ``consult``: the planner asks the advisor before its model call (one call); a ``reused``
  suggestion is the plan (``reused_planning``), otherwise the example and the warnings go
  into the prompt (``prompt_for``).
- ``advice_note``: what the turn's metadata and the plan's state keep: where the plan came
  from and which strategy it runs (the suggested one when the plan is reused or has the
  suggestion's shape, else a new one named after the turn).
- ``job_origin``: the request and the whole plan, carried by the job to the execution memory.
- ``learn_from_turn``: the user's feedback that a finished turn carries: a refused step of
  the plan, or "that was wrong" right after a job's result. Approvals are never skipped:
  a reused plan runs through ``agent_execution`` like any other.
"""

from __future__ import annotations

import uuid

from shared.conversation.answers import REJECT
from shared.conversation.verdicts import is_negative_verdict
from shared.graph.context import TurnContext
from shared.graph.routing import MAX_PLAN_STEPS
from shared.graph.state import Planning, PlanStep, TurnState
from shared.models.history import Advice, JobOrigin, PlanAdvice, PlannedStep
from shared.services.agent_jobs.reports import RESULT_SUFFIX
from shared.services.history.prompts import advice_prompt


def consult(context: TurnContext, state: TurnState) -> Advice:
    conversation = state.conversation
    advice = context.ports.advisor.advise(
        context.user_id, conversation.focus, conversation.language
    )
    if advice.source == "reused" and len(advice.plan) > MAX_PLAN_STEPS:  # a job's, not a turn's
        return advice.model_copy(update={"source": "example"})
    return advice


def prompt_for(advice: Advice) -> str:
    return advice_prompt(advice)


def reused_planning(context: TurnContext, advice: Advice) -> Planning:
    steps = [
        PlanStep(id=s.id, agent=s.agent, inputs={"goal": s.goal}, depends_on=s.depends_on)
        for s in advice.plan
    ]
    return Planning(steps=steps, results=[], advice=advice_note(context, advice, steps))


def advice_note(context: TurnContext, advice: Advice, steps: list[PlanStep]) -> PlanAdvice:
    suggestion = advice.suggestion
    same_plan = suggestion is not None and (
        advice.source == "reused"
        or _outline(steps) == [(s.agent, s.depends_on) for s in advice.plan]
    )
    return PlanAdvice(
        source=advice.source,
        strategy_id=suggestion.strategy_id if same_plan and suggestion else _new(context),
        suggested=suggestion.strategy_id if suggestion else None,
        confidence=advice.confidence,
        warnings=len(advice.warnings),
    )


def job_origin(state: TurnState) -> JobOrigin | None:
    planning = state.planning
    if planning.advice is None or not state.conversation.focus:
        return None
    return JobOrigin(
        request=state.conversation.focus,
        language=state.conversation.language,
        strategy_id=planning.advice.strategy_id,
        plan=[
            PlannedStep(
                id=s.id, agent=s.agent, goal=s.inputs.get("goal") or "-", depends_on=s.depends_on
            )
            for s in planning.steps
        ],
    )


def learn_from_turn(context: TurnContext, state: TurnState) -> None:
    hitl, advisor = state.hitl, context.ports.advisor
    pending = hitl.pending
    if hitl.outcome == "answered" and pending is not None:
        refused = pending.interrupt.kind == "approval" and hitl.option_id == REJECT
        advice = state.planning.advice
        if refused and not hitl.timed_out and advice is not None:
            advisor.feedback(
                context.user_id,
                pending.interrupt.id,
                "rejected_step",
                strategy_id=advice.strategy_id,
            )
        return
    judged = _judged_job(state)
    if judged is not None and is_negative_verdict(state.conversation.user_message):
        advisor.feedback(context.user_id, context.turn_id, "wrong", job_id=judged)


def _judged_job(state: TurnState) -> str | None:
    """The job whose result is the chat's last message, which the user reacts to."""
    history = state.conversation.history
    last = history[-1] if history else None
    if last is None or last.role != "assistant" or not last.id.endswith(RESULT_SUFFIX):
        return None
    return last.id.removesuffix(RESULT_SUFFIX)


def _outline(steps: list[PlanStep]) -> list[tuple[str, list[str]]]:
    return [(s.agent, s.depends_on) for s in steps]


def _new(context: TurnContext) -> str:
    """A plan made by the model starts a strategy, named after the turn that planned it."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"strategy:{context.turn_id}"))
