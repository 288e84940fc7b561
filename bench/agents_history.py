"""``bench.agents --history``: what learning from history saves and what it changes.

50 requests drawn from 10 task families (5 each, shuffled with a fixed seed), each run as a
whole complex turn (``TurnService``: classification, the planner, agent execution, the
reply) followed by its agent job (``AgentJobService``), for a user without the advisor and
then a user with it, in one run. Stores are the in-memory fakes except the
execution memory (the test stack's PostgreSQL, encrypted as in production); embeddings are
all-MiniLM-L6-v2 (offline), so similarity is that of a real model.

The scripted model answers every call after a realistic latency (``--first-token-ms``
400 + ``--ms-per-token`` 4 per output token, Gemini-Flash-like, scaled by
``--latency-scale``). What it plans is the assumption under test, stated here:

- without a past plan in its prompt, the planner makes a family's poor plan (a step given
  to an agent that cannot do it) for 30% of requests (fixed per request, the same in both
  arms), else the good one;
- with a warning ("last time, X failed because Y") or an example in its prompt, it plans
  the good one (the example is the plan that worked; a warning names the poor one);
- an agent given a step it cannot do breaks its output schema twice, and the step fails.

Printed: planning calls made and avoided, planner tokens and planner time (the
``global_planner`` node, the advisor's lookup included), jobs done (success rate), and how
the advisor advised (reused / example / warned).

    .venv/bin/python -m bench.agents --history [--latency-scale 1.0]
"""

from __future__ import annotations

import hashlib
import logging
import random
import statistics
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from shared.adapters.clock import SystemClock
from shared.adapters.local_embedder import LocalEmbedder
from shared.agents.registry import AGENTS
from shared.app.agent_delivery import AgentJobService
from shared.app.turn import TurnService
from shared.config import Settings
from shared.deps import Deps
from shared.fakes.scripted_llm import ScriptedLLM
from shared.graph.nodes.classification import Classification
from shared.graph.nodes.planning import Plan
from shared.models.jobs import AgentJob
from shared.models.wire import TurnRequest
from shared.ports import LLMRequest
from shared.services.agent_jobs.prompts import AgentStep
from shared.services.history.recorder import outcome_of
from testkit.fakes import in_memory_stores

POOR_SHARE = 0.3
SEED = 13
Step = tuple[str, str, tuple[int, ...]]  # agent, goal template, depends on (indexes)

# Each family: the request template, its parameters (5 requests), its good plan, and the
# index of the step its poor plan gives to the wrong agent.
FAMILIES: list[tuple[str, list[tuple[str, ...]], list[Step], int]] = [
    ("Research the {0} market", [("AI agent",), ("RPA",), ("Quantum computing",), ("eVTOL",),
     ("Solar PV",)],
     [("research", "Collect the main vendors of the {0} market", ()),
      ("research", "Summarize the trends of the {0} market", (0,))], 0),
    ("Plan a trip to {0} in {1}", [("Rome", "May"), ("Lisbon", "June"), ("Oslo", "July"),
     ("Kyoto", "April"), ("Quito", "March")],
     [("research", "Find flights to {0} in {1}", ()), ("research", "Find hotels in {0}", ()),
      ("research", "Compare the options for {0} in {1}", (0, 1))], 2),
    ("Summarize my spending in {0}", [("January",), ("February",), ("March",), ("April",),
     ("May",)],
     [("wealth", "Sum up the expenses of {0} by category", ())], 0),
    ("Compare the {0} and the {1} phones", [("Pixel 9", "iPhone 16"), ("Galaxy S24", "Pixel 9"),
     ("Xperia 1", "Galaxy S24"), ("iPhone 16", "Xperia 1"), ("Nothing 2", "Pixel 9")],
     [("research", "Specifications of the {0}", ()), ("research", "Specifications of the {1}", ()),
      ("research", "Compare the {0} with the {1}", (0, 1))], 0),
    ("Prepare a briefing on {0} before my meeting", [("Siemens",), ("Nestlé",), ("Roche",),
     ("Novartis",), ("Logitech",)],
     [("research", "Recent news about {0}", ()),
      ("drafting", "Draft a one-page briefing on {0}", (0,))], 0),
    ("Check my {0} budget for {1}", [("groceries", "May"), ("travel", "June"),
     ("dining", "May"), ("clothing", "July"), ("transport", "June")],
     [("wealth", "Budget and spending for {0} in {1}", ())], 0),
    ("Find recipes with {0} for {1} people", [("lentils", "4"), ("salmon", "2"),
     ("tofu", "6"), ("chickpeas", "3"), ("mushrooms", "5")],
     [("research", "Recipes with {0} for {1} people", ())], 0),
    ("Write a report on {0} energy in {1}", [("wind", "Denmark"), ("solar", "Spain"),
     ("hydro", "Norway"), ("nuclear", "France"), ("geothermal", "Iceland")],
     [("research", "Facts on {0} energy in {1}", ()),
      ("drafting", "Draft the report on {0} energy in {1}", (0,))], 0),
    ("Estimate the cost of a {0}-day trip to {1}", [("5", "Paris"), ("3", "Vienna"),
     ("7", "Prague"), ("4", "Berlin"), ("10", "Madrid")],
     [("research", "Prices of hotels and meals in {1}", ()),
      ("wealth", "Total cost of {0} days in {1}", (0,))], 1),
    ("Find a gift for {0} under {1} euros", [("Bea", "50"), ("Tom", "80"), ("Ana", "30"),
     ("Leo", "100"), ("Mia", "60")],
     [("research", "Gift ideas for {0} under {1} euros", ())], 0),
]  # fmt: skip
WRONG_AGENT = {"research": "wealth", "wealth": "research"}


@dataclass(frozen=True)
class Task:
    family: int
    request: str
    params: tuple[str, ...]

    def plan(self, poor: bool) -> dict[str, Any]:
        _, _, steps, weak = FAMILIES[self.family]
        planned = []
        for index, (right, goal, after) in enumerate(steps):
            planned.append(
                {
                    "id": f"s{index + 1}",
                    "agent": WRONG_AGENT[right] if poor and index == weak else right,
                    "goal": goal.format(*self.params),
                    "depends_on": [f"s{i + 1}" for i in after],
                }
            )
        return {"steps": planned}

    def right_agents(self) -> dict[str, str]:
        steps = FAMILIES[self.family][2]
        return {goal.format(*self.params): agent for agent, goal, _ in steps}

    def poor_at_first(self) -> bool:
        digest = hashlib.sha256(self.request.encode()).digest()
        return digest[0] / 256 < POOR_SHARE


def tasks() -> list[Task]:
    drawn = [
        Task(f, template.format(*params), params)
        for f, (template, all_params, _, _) in enumerate(FAMILIES)
        for params in all_params
    ]
    random.Random(SEED).shuffle(drawn)
    return drawn


@dataclass
class Latency:
    first_token_ms: float
    ms_per_token: float
    scale: float

    def wait(self, text: str) -> None:
        tokens = len(text.split()) * 4 // 3 + 1
        time.sleep(self.scale * (self.first_token_ms + self.ms_per_token * tokens) / 1000)


@dataclass
class Model:
    """The scripted model of one arm (see the module's docstring for what it assumes)."""

    latency: Latency
    tasks: dict[str, Task]
    unknown_goals: list[str] = field(default_factory=list)  # no family plan has them

    def __post_init__(self) -> None:
        self.right = {g: a for t in self.tasks.values() for g, a in t.right_agents().items()}

    def __call__(self, request: LLMRequest, schema: type[BaseModel] | None) -> Any:
        reply = self._reply(request, schema)
        self.latency.wait(str(reply))
        return reply

    def _reply(self, request: LLMRequest, schema: type[BaseModel] | None) -> Any:
        text = request.messages[-1].text if request.messages else ""
        if schema is Classification:
            return {"route": "complex", "entities": [], "temporal_references": [],
                    "has_extractable_facts": False, "has_preferences": False,
                    "needs_semantic_retrieval": False, "needs_temporal_retrieval": False,
                    "language": "en"}  # fmt: skip
        if schema is Plan:
            task = self.tasks[request.messages[0].text]
            guided = "A similar earlier request" in request.system or "Warning:" in request.system
            return task.plan(poor=task.poor_at_first() and not guided)
        if schema is AgentStep:
            goal = request.messages[0].text.split("\n", 1)[0].removeprefix("Goal: ")
            agent = next(
                a for a, spec in AGENTS.items() if request.system.startswith(spec.instructions)
            )
            if goal not in self.right:
                self.unknown_goals.append(goal)
            if self.right.get(goal, agent) != agent:
                return {"action": "dance"}  # cannot do it: breaks the schema
            return {"action": "finish", "text": f"Done: {goal}"}
        if schema is not None:
            return {"verdict": "OK", "note": ""}
        return f"Here is what I found and started for: {text[:200]}"


@dataclass
class Arm:
    label: str
    advisor: bool
    planning_calls: int = 0
    planner_tokens: int = 0
    planner_ms: list[float] = field(default_factory=list)
    outcomes: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    wall: float = 0.0
    unknown_goals: list[str] = field(default_factory=list)


def run_arm(arm: Arm, settings: Settings, latency: Latency, embedder: LocalEmbedder) -> str:
    """The 50 requests as turns and jobs of one new user; returns the user id."""
    user = f"bench-history-{uuid.uuid4().hex[:8]}"
    drawn = tasks()
    model = Model(latency, {t.request: t for t in drawn})
    llm, clock = ScriptedLLM(handler=model), SystemClock()
    stores = in_memory_stores(clock, leave_out=frozenset({"executions", "keyring"}))
    update = {"advisor_enabled": arm.advisor, "rate_limit_per_minute": 10_000}
    deps = Deps(settings.model_copy(update=update), llm=llm, embedder=embedder, clock=clock,
                **stores)  # fmt: skip
    turns, runner, began = TurnService(deps), AgentJobService(deps), time.perf_counter()
    for n, task in enumerate(drawn):
        before = len(llm.calls)
        turns.run(user, TurnRequest(message=task.request, client_message_id=f"m{n}"))
        arm.planning_calls += sum(1 for c in llm.calls[before:] if c.schema is Plan)
        record = deps.conversations.get_turn(user, f"m{n}")
        assert record is not None and record.metadata is not None
        planner = [r for r in record.metadata.nodes if r.node == "global_planner"]
        arm.planner_ms += [r.ms for r in planner]
        arm.planner_tokens += sum(r.input_tokens + r.output_tokens for r in planner)
        advice = record.metadata.plan_advice
        warned = advice is not None and advice.warnings > 0 and advice.source == "planned"
        arm.sources.append("warned" if warned else advice.source if advice else "none")
        published = deps.publisher.messages  # type: ignore[attr-defined]
        for message in published:
            job = AgentJob.model_validate_json(message.data)
            runner.run(job, f"{job.job_id}-push")
            state = deps.jobs.get(user, job.job_id)
            arm.outcomes.append(outcome_of(state) if state else "lost")
        published.clear()
    arm.wall = time.perf_counter() - began
    arm.unknown_goals = model.unknown_goals
    return user


def report(arms: list[Arm]) -> None:
    without, with_ = arms
    rows = [
        ("planning calls", lambda a: f"{a.planning_calls}"),
        ("planner tokens", lambda a: f"{a.planner_tokens:,}"),
        ("planner time, s", lambda a: f"{sum(a.planner_ms) / 1000:.1f}"),
        ("planner p50, ms", lambda a: f"{statistics.median(a.planner_ms):.0f}"),
        ("jobs done / run", lambda a: f"{a.outcomes.count('done')} / {len(a.outcomes)}"),
        ("success rate", lambda a: f"{a.outcomes.count('done') / len(a.outcomes):.0%}"),
        ("wall time, s", lambda a: f"{a.wall:.1f}"),
    ]
    print(f"  {'':<22}{'without advisor':>18}{'with advisor':>16}")
    for label, value in rows:
        print(f"  {label:<22}{value(without):>18}{value(with_):>16}")
    avoided = without.planning_calls - with_.planning_calls
    tokens = without.planner_tokens - with_.planner_tokens
    seconds = (sum(without.planner_ms) - sum(with_.planner_ms)) / 1000
    print(
        f"  saved by the advisor: {avoided} planning calls "
        f"({avoided / max(without.planning_calls, 1):.0%}), {tokens:,} planner tokens "
        f"({tokens / max(without.planner_tokens, 1):.0%}), {seconds:.1f} s of planner time"
    )
    counts = {s: with_.sources.count(s) for s in ("reused", "example", "warned", "planned")}
    print(
        "  advice: "
        + ", ".join(f"{n} {s}" for s, n in counts.items())
        + f"; outcomes with: {_tally(with_.outcomes)}; without: {_tally(without.outcomes)}"
    )
    lookups = [ms for ms, s in zip(with_.planner_ms, with_.sources, strict=True) if s == "reused"]
    if lookups:
        calls = sorted(without.planner_ms)
        lookup, call = statistics.median(lookups), statistics.median(calls)
        print(
            f"  one lookup (a reused plan's planner node: embed + PostgreSQL): p50 {lookup:.0f}"
            f" ms; one planning call: p50 {call:.0f} ms. Calls avoided x call p50 ="
            f" {avoided * call / 1000:.1f} s saved; {len(with_.planner_ms)} lookups x p50 ="
            f" {len(with_.planner_ms) * lookup / 1000:.1f} s spent"
        )
    odd = with_.unknown_goals
    print(f"  steps whose goal no family plan has (a poor adaptation): {len(odd)} {odd[:3]}")


def _tally(outcomes: list[str]) -> str:
    return ", ".join(f"{outcomes.count(o)} {o}" for o in sorted(set(outcomes)))


def history_part(
    settings: Settings, first_token_ms: float, ms_per_token: float, scale: float
) -> None:
    latency = Latency(first_token_ms, ms_per_token, scale)
    for name in ("agents", "structured"):  # the poor plans' failures, expected
        logging.getLogger(name).setLevel(logging.ERROR)
    print(
        f"history: {len(tasks())} jobs from {len(FAMILIES)} task families, scripted model at "
        f"{first_token_ms:g} ms + {ms_per_token:g} ms/token (x{scale:g}), MiniLM embeddings, "
        "execution memory on PostgreSQL"
    )
    embedder = LocalEmbedder()
    embedder.load()
    arms = [Arm("without", advisor=False), Arm("with", advisor=True)]
    users = [run_arm(arm, settings, latency, embedder) for arm in arms]  # one after the other
    report(arms)
    cleanup = Deps(settings)
    for user in users:
        cleanup.executions.forget_all(user)
        cleanup.keyring.forget(user)
