"""Agent jobs: throughput, publish -> result latency, and the DAG's parallel speed-up.

Three parts, agents answering at once unless said otherwise (a scripted model at 0 ms):

1. **runner**: ``AgentJobService.run`` in-process on the test stack's Firestore emulator (the
   job document and the chat), one job after another: jobs/s and p50/p95 per job, for jobs
   of one subtask and for seed 001's six-subtask DAG.
2. **publish -> result**: jobs published to the Pub/Sub emulator's ``agent-jobs`` topic,
   pushed through the stack's relay to a freshly spawned agents function (the production
   Vertex client against an in-process fake endpoint), until the result message is in
   Firestore: p50/p95 one at a time, and jobs/s for a burst published at once. Skipped when
   the agents port is taken (an end-to-end session is serving the functions).
3. **speed-up**: seed 001's example (A-D in parallel, C recruits a pricing helper, E after
   A-D and the helper, F after E), each agent taking the seed's seconds scaled to
   ``--ms-per-second`` ms, run with the supervisor's parallelism and serially (1 worker),
   on in-memory stores; the seed says ~85 s serial vs ~45 s with the supervisor.

    .venv/bin/python -m bench.agents [--jobs 50] [--burst 50] [--ms-per-second 20]
    .venv/bin/python -m bench.agents --history [--latency-scale 1.0]  (bench/agents_history.py)

Needs ``scripts/stack up --profile test``. Runs as fresh users whose Firestore documents
are deleted at the end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from google.cloud import pubsub_v1

from bench.agents_history import history_part
from scripts.serve import spawn, wait_ready
from shared.adapters.clock import SystemClock
from shared.adapters.pubsub import PubSubPublisher
from shared.agents.spec import AgentPorts, AgentSpec, Tool
from shared.app.agent_delivery import AgentJobService
from shared.config import Settings
from shared.deps import Deps
from shared.fakes.conversations import FakeConversationStore
from shared.fakes.jobs import FakeJobStore, FakeOperatorAlerts
from shared.fakes.scripted_llm import ScriptedLLM
from shared.models.jobs import AgentJob, Subtask
from shared.ports import LLMRequest
from shared.services.agent_jobs.prompts import AgentStep
from testkit.stack_env import require_stack_env
from testkit.vertex_server import FakeReply, FakeVertexServer, RecordedRequest, json_reply

SEED_SECONDS = {"A": 15, "B": 12, "C": 18, "D": 15, "E": 15, "F": 10, "C-r1": 10}
WORKER = AgentSpec("worker", "analyst", "does one part", "Do your part.", max_steps=5)


class BenchCatalog:
    """One tool-less agent, which may recruit itself as a helper."""

    def agent(self, name: str) -> AgentSpec:
        return WORKER

    def tools(self, spec: AgentSpec, ports: AgentPorts) -> tuple[Tool, ...]:
        return ()

    def helpers(self) -> tuple[str, ...]:
        return ("worker",)


def seed_job(user: str, job_id: str) -> AgentJob:
    subtasks = [Subtask(id=s, agent="worker", goal=f"part {s}") for s in "ABCD"]
    subtasks += [
        Subtask(id="E", agent="worker", goal="part E", depends_on=list("ABCD")),
        Subtask(id="F", agent="worker", goal="part F", depends_on=["E"]),
    ]
    return AgentJob(
        job_id=job_id,
        user_id=user,
        chat_id="c1",
        turn_id="t1",
        goal="analysis",
        subtasks=subtasks,
        created_at=datetime.now(UTC),
    )


def single_job(user: str, job_id: str) -> AgentJob:
    return AgentJob(
        job_id=job_id,
        user_id=user,
        chat_id="c1",
        turn_id="t1",
        agent="worker",
        goal="part X",
        created_at=datetime.now(UTC),
    )


def instant(request: LLMRequest, schema: Any) -> Any:
    goal = request.messages[0].text.split("\n", 1)[0].removeprefix("Goal: ")
    return (
        {"action": "finish", "text": f"done: {goal}"} if schema is AgentStep else {"verdict": "OK"}
    )


def figures(label: str, seconds: list[float], wall: float) -> None:
    ms = sorted(s * 1000 for s in seconds)
    p95 = statistics.quantiles(ms, n=100, method="inclusive")[94] if len(ms) > 1 else ms[0]
    print(
        f"  {label:<34} {len(ms) / wall:8.1f} jobs/s   p50 {statistics.median(ms):7.1f} ms"
        f"   p95 {p95:7.1f} ms"
    )


# -- 1. the runner on the stack's Firestore ---------------------------------------------------
def runner_part(settings: Settings, jobs: int) -> None:
    deps = Deps(settings, llm=ScriptedLLM(handler=instant), operator_alerts=FakeOperatorAlerts())
    service = AgentJobService(deps, BenchCatalog())
    print("1. runner (in-process, Firestore emulator, agents at 0 ms)")
    for label, make in (("one subtask", single_job), ("seed DAG, six subtasks", seed_job)):
        user = f"bench-{uuid.uuid4().hex[:10]}"
        deps.conversations.create_chat(user, "c1", deps.clock.now())
        times: list[float] = []
        started = time.perf_counter()
        for n in range(jobs):
            began = time.perf_counter()
            assert service.run(make(user, f"j{n}"), f"m{n}").status == "done"
            times.append(time.perf_counter() - began)
        figures(label, times, time.perf_counter() - started)
        deps.account_conversations.delete_user(user)


# -- 2. publish -> result through Pub/Sub -----------------------------------------------------
def fake_vertex(request: RecordedRequest) -> FakeReply:
    contents = request.body.get("contents") or [{}]
    text = "".join(str(p.get("text", "")) for p in contents[0].get("parts", []))
    goal = text.split("\n", 1)[0].removeprefix("Goal: ")
    config = request.body.get("generationConfig") or {}
    fields = (config.get("responseJsonSchema") or {}).get("properties") or {}
    if "tool_args" in fields:
        return json_reply({"action": "finish", "text": f"done: {goal}"})
    return json_reply({"verdict": "OK", "note": ""})


def pubsub_part(settings: Settings, jobs: int, burst: int) -> None:
    port = int(settings.agents_url.rstrip("/").rsplit(":", 1)[1])
    print("2. publish -> result (Pub/Sub emulator, push relay, agents function, fake Vertex)")
    if wait_ready(port, seconds=0.2):
        print("  skipped: the agents port is taken (functions served by an e2e session?)")
        return
    with FakeVertexServer(token="bench-token", fallback=fake_vertex) as model:
        env = {
            **os.environ,
            "MODEL_PROVIDER": "vertex",
            "VERTEX_BASE_URL": model.base_url,
            "VERTEX_ACCESS_TOKEN": model.token,
            "LOG_LEVEL": "ERROR",
        }
        process = spawn("agents", port, env, subprocess.DEVNULL)
        try:
            assert wait_ready(port), "the agents function did not start"
            deps = Deps(settings)
            publisher = PubSubPublisher(pubsub_v1.PublisherClient(), settings.gcp_project)
            user = f"bench-{uuid.uuid4().hex[:10]}"
            deps.conversations.create_chat(user, "c1", deps.clock.now())
            publish = _publisher(settings, publisher, user)
            publish("warm-up", single_job)
            _await(deps, user, ["warm-up"])
            times, started = [], time.perf_counter()
            for n in range(jobs):
                began = publish(f"s{n}", single_job)
                times.append(_await(deps, user, [f"s{n}"])[0] - began)
            figures("one at a time", times, time.perf_counter() - started)
            started = time.perf_counter()
            sent = {f"b{n}": publish(f"b{n}", single_job) for n in range(burst)}
            done = _await(deps, user, list(sent))
            wall = max(done) - started
            figures(
                f"burst of {burst}", [d - s for d, s in zip(done, sent.values(), strict=True)], wall
            )
            deps.account_conversations.delete_user(user)
        finally:
            process.terminate()
            process.wait(10)


def _publisher(
    settings: Settings, publisher: PubSubPublisher, user: str
) -> Callable[[str, Callable[[str, str], AgentJob]], float]:
    def publish(job_id: str, make: Callable[[str, str], AgentJob]) -> float:
        began = time.perf_counter()
        data = make(user, job_id).model_dump_json().encode()
        publisher.publish(settings.agents_topic, data, {"job_id": job_id})
        return began

    return publish


def _await(deps: Deps, user: str, job_ids: list[str], timeout: float = 120.0) -> list[float]:
    """When each job's result message appeared (perf_counter), polling Firestore."""
    seen: dict[str, float] = {}
    messages = deps._firestore.collection("users").document(user).collection("chats")
    deadline = time.perf_counter() + timeout
    while len(seen) < len(job_ids) and time.perf_counter() < deadline:
        ids = {snap.id for snap in messages.document("c1").collection("messages").stream()}
        now = time.perf_counter()
        for job_id in job_ids:
            if f"{job_id}-result" in ids:
                seen.setdefault(job_id, now)
        time.sleep(0.005)
    assert len(seen) == len(job_ids), f"{len(job_ids) - len(seen)} results never came"
    return [seen[j] for j in job_ids]


# -- 3. the DAG's speed-up ----------------------------------------------------------------------
def speedup_part(settings: Settings, ms_per_second: float) -> None:
    def timed(request: LLMRequest, schema: Any) -> Any:
        goal = request.messages[0].text.split("\n", 1)[0].removeprefix("Goal: ")
        part = goal.removeprefix("part ")
        if part == "C" and len(request.messages) == 1:  # C's first step recruits the helper
            return {"action": "recruit", "agent": "worker", "text": "part C-r1"}
        time.sleep(SEED_SECONDS[part] * ms_per_second / 1000)
        return {"action": "finish", "text": f"done: {goal}"}

    print(f"3. speed-up on seed 001's example (1 seed second = {ms_per_second:g} ms)")
    walls = {}
    for label, workers in (("parallel", settings.agent_parallelism), ("serial", 1)):
        deps = Deps(
            settings.model_copy(update={"agent_parallelism": workers}),
            llm=ScriptedLLM(handler=timed),
            clock=SystemClock(),
            conversations=FakeConversationStore(),
            jobs=FakeJobStore(),
            operator_alerts=FakeOperatorAlerts(),
        )
        deps.conversations.create_chat("bench", "c1", deps.clock.now())
        began = time.perf_counter()
        AgentJobService(deps, BenchCatalog()).run(seed_job("bench", "seed"), "m")
        walls[label] = time.perf_counter() - began
        seed = walls[label] * 1000 / ms_per_second
        print(
            f"  {label:<10} ({workers} workers) {walls[label] * 1000:8.0f} ms  = {seed:5.1f} seed s"
        )
    print(
        f"  speed-up {walls['serial'] / walls['parallel']:.2f}x  (seed: ~85 s -> ~45 s, 1.9x; "
        f"critical path 18+15+10 = 43 of 95 seed s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--jobs", type=int, default=50)
    parser.add_argument("--burst", type=int, default=50)
    parser.add_argument("--ms-per-second", type=float, default=20.0)
    parser.add_argument("--history", action="store_true", help="learning from history only")
    parser.add_argument("--first-token-ms", type=float, default=400.0)
    parser.add_argument("--ms-per-token", type=float, default=4.0)
    parser.add_argument("--latency-scale", type=float, default=1.0)
    args = parser.parse_args()
    require_stack_env()
    settings = Settings(env="test", model_provider="scripted")
    if args.history:
        history_part(settings, args.first_token_ms, args.ms_per_token, args.latency_scale)
        return
    runner_part(settings, args.jobs)
    pubsub_part(settings, args.jobs, args.burst)
    speedup_part(settings, args.ms_per_second)


if __name__ == "__main__":
    main()
