"""The planner and learning from history, through whole turns on the fakes: a request like
one that worked plans with no planning call and runs the adapted plan; a moderately
confident one becomes the planner's example; a failed one is a warning in its prompt;
approvals are still asked for a reused plan; a refused step and "that was wrong" mark the
strategy down; the job carries its request and plan to the execution memory."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

from shared.app.turn import TurnService
from shared.config import Settings
from shared.deps import Deps
from shared.errors import DependencyUnavailable
from shared.fakes.clock import FixedClock
from shared.fakes.scripted_llm import HashEmbedder, ScriptedLLM
from shared.graph.nodes.planning import Plan
from shared.models.domain import Message
from shared.models.history import ExecutionDraft, PlanAdvice, PlannedStep, SubtaskFailure
from shared.models.jobs import AgentJob
from shared.services.history.shape import shape
from shared.services.ids import turn_id_for
from testkit.fakes import in_memory_stores
from tests.unit.turn_kit import classification, metadata, request

AI_MARKET = "Research the AI agent market"


def seed(
    deps: Deps, text: str, steps: list[PlannedStep], strategy: str = "A", **extra: object
) -> None:
    now = deps.clock.now()
    draft = ExecutionDraft.model_validate(
        {
            "user_id": "alice",
            "job_id": f"job-{uuid.uuid4().hex[:6]}",
            "strategy_id": strategy,
            "request": text,
            "plan": steps,
            "outcome": "done",
            "subtasks": len(steps),
            "embedding": deps.embedder.embed([shape(text)])[0],
            "embedding_model": deps.embedder.model_name,
            "created_at": now,
            "expires_at": now + timedelta(days=30),
            **extra,
        }
    )
    assert deps.executions.record(draft, issued_at=now)


def step(goal: str, agent: str = "research", sid: str = "s1") -> PlannedStep:
    return PlannedStep(id=sid, agent=agent, goal=goal)


def planning_calls(llm: ScriptedLLM) -> list[str]:
    return [call.request.system for call in llm.calls if call.schema is Plan]


def jobs(deps: Deps) -> list[AgentJob]:
    return [AgentJob.model_validate_json(m.data) for m in deps.publisher.messages]  # type: ignore[attr-defined]


def penalties(deps: Deps) -> list[int]:
    return [run.penalties for run in deps.executions.list_executions("alice", deps.clock.now(), 10)]


def test_a_request_like_one_that_worked_plans_without_the_model(
    deps: Deps, llm: ScriptedLLM
) -> None:
    seed(deps, AI_MARKET, [step("List the AI agent vendors"), step("Compare them", sid="s2")])
    llm.add(classification("complex"), "I started on it.")  # no plan: a planning call fails
    response = TurnService(deps).run("alice", request("Research the RPA market"))
    assert response.reply.kind != "fallback"
    assert planning_calls(llm) == []
    [job] = jobs(deps)
    assert [s.goal for s in job.subtasks] == ["List the RPA vendors", "Compare them"]
    assert job.origin is not None and job.origin.strategy_id == "A"
    advice = metadata(deps, "m1").plan_advice
    assert advice is not None and (advice.source, advice.strategy_id) == ("reused", "A")
    assert advice.confidence is not None and advice.confidence > 0.8
    [planner] = [run for run in metadata(deps, "m1").nodes if run.node == "global_planner"]
    assert planner.input_tokens == planner.output_tokens == 0


def test_a_reused_plan_still_asks_for_approval_and_a_refusal_marks_it_down(
    deps: Deps, llm: ScriptedLLM
) -> None:
    seed(deps, "Book the gym on Friday", [step("Book the gym on Friday 3pm", "productivity")])
    llm.add(classification("complex"))
    service = TurnService(deps)
    asked = service.run("alice", request("Book the pool on Friday"))
    assert planning_calls(llm) == []
    assert asked.interrupt is not None and asked.interrupt.kind == "approval"
    assert "Book the pool on Friday 3pm" in asked.interrupt.question
    assert jobs(deps) == []  # nothing acted before the answer
    service.run("alice", request("no", cmid="m2", chat_id=asked.chat_id))
    assert jobs(deps) == []
    assert penalties(deps) == [1]
    answered = metadata(deps, "m2").plan_advice
    assert answered is not None and answered.strategy_id == "A"  # carried through the answer


def plan_the_rpa_market(deps: Deps, llm: ScriptedLLM) -> tuple[str, PlanAdvice]:
    """A turn the model plans: the planner's prompt, and the advice the turn recorded."""
    plan = {"steps": [{"id": "s1", "agent": "research", "goal": "List the RPA vendors"}]}
    llm.add(classification("complex"), plan, "I started on it.")
    TurnService(deps).run("alice", request("Research the RPA market"))
    [prompt] = planning_calls(llm)
    advice = metadata(deps, "m1").plan_advice
    assert advice is not None
    return prompt, advice


@pytest.fixture
def cautious(clock: FixedClock, llm: ScriptedLLM) -> Deps:
    """Reuse needs a confidence no strategy reaches: similar plans are examples."""
    settings = Settings(env="test", model_provider="scripted", advisor_reuse_confidence=0.99)
    return Deps(
        settings, clock=clock, llm=llm, embedder=HashEmbedder(64), **in_memory_stores(clock)
    )


def test_a_fairly_confident_plan_is_the_planners_example(cautious: Deps, llm: ScriptedLLM) -> None:
    seed(cautious, AI_MARKET, [step("List the AI agent vendors")])
    prompt, advice = plan_the_rpa_market(cautious, llm)
    assert f"A similar earlier request of this user, “{AI_MARKET}”" in prompt
    assert "- s1 research: List the AI agent vendors" in prompt
    assert advice.source == "example"
    assert advice.strategy_id == "A"  # the planner kept the example's shape: a run of A


def test_a_plan_that_failed_is_a_warning_in_the_planners_prompt(
    deps: Deps, llm: ScriptedLLM
) -> None:
    failure = SubtaskFailure(
        subtask_id="s1", agent="research", goal="g", error="step_limit: no answer after 30 steps"
    )
    seed(deps, AI_MARKET, [step("Search everything")], outcome="aborted", failures=[failure])
    prompt, advice = plan_the_rpa_market(deps, llm)
    assert f"Warning: last time, for “{AI_MARKET}”, this plan failed" in prompt
    assert "s1 (research) failed because step_limit: no answer after 30 steps" in prompt
    assert (advice.source, advice.warnings) == ("planned", 1)


def test_a_new_plan_starts_a_strategy_and_its_job_carries_request_and_plan(
    deps: Deps, llm: ScriptedLLM
) -> None:
    plan = {
        "steps": [
            {"id": "s1", "agent": "research", "goal": "compare hotels in Rome"},
            {"id": "s2", "agent": "drafting", "goal": "draft a note to Bea"},
        ]
    }
    llm.add(classification("complex"), plan, "Dear Bea, ...", "Here is your draft.")
    TurnService(deps).run("alice", request("Plan Rome and tell Bea"))
    [job] = jobs(deps)
    origin = job.origin
    assert origin is not None and origin.request == "Plan Rome and tell Bea"
    assert [(s.id, s.agent) for s in origin.plan] == [("s1", "research"), ("s2", "drafting")]
    advice = metadata(deps, "m1").plan_advice
    assert advice is not None and advice.source == "planned"
    expected = str(uuid.uuid5(uuid.NAMESPACE_URL, f"strategy:{turn_id_for('alice', 'm1')}"))
    assert origin.strategy_id == advice.strategy_id == expected


def test_that_was_wrong_after_a_jobs_result_marks_its_strategy_down(
    deps: Deps, llm: ScriptedLLM, clock: FixedClock
) -> None:
    seed(deps, AI_MARKET, [step("List the AI agent vendors")], job_id="t0-job0")
    deps.conversations.create_chat("alice", "c1", clock.now())
    result = Message(id="t0-job0-result", role="assistant", text="Vendors: ...",
                     created_at=clock.now(), turn_id="t0")  # fmt: skip
    deps.conversations.append_message("alice", "c1", result)
    clock.advance(5)
    llm.add(classification("simple"), "Sorry about that.", classification("simple"), "Sorry.")
    service = TurnService(deps)
    service.run("alice", request("That was wrong.", chat_id="c1"))
    assert penalties(deps) == [1]
    service.run("alice", request("That was wrong.", cmid="m2", chat_id="c1"))
    assert penalties(deps) == [1]  # the last message is no longer the job's result


def test_an_outage_of_the_history_costs_the_advice_not_the_turn(
    deps: Deps, llm: ScriptedLLM
) -> None:
    class Down:
        def related(self, *args: object) -> None:
            raise DependencyUnavailable("postgres unreachable")

    deps.__dict__["executions"] = Down()
    _, advice = plan_the_rpa_market(deps, llm)  # planned by the model: the turn went on
    assert advice.source == "planned" and metadata(deps, "m1").outcome == "ok"
