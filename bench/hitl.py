"""Human in the loop: Firestore calls and bytes per turn and per resume, checkpoint size,
resume latency, against the Firestore emulator.

Firestore is the stack's (the conversation store, the control record and the checkpoints);
the other stores are in-memory fakes and the model is scripted at 0 ms, so every figure is
the HITL machinery's own. Each sample is a new chat of one user:

- **plain turn**: a simple question (no interrupt): what checkpointing costs every turn;
- **asking turn**: a request the planner gives to the acting productivity agent, so the
  turn asks for approval and the thread pauses;
- **resume**: the approval through ``ResumeService`` (claim, checkpoint, the step, reply);
- **racing answers**: several answers to one approval at once (a double tap, two devices):
  how long until all are settled, and that exactly one claimed it.

Then one chat of 20 messages (10 turns) ends with an approval question: the size of the
checkpoint it leaves. RPCs are counted at the Firestore client (``testkit/probes.py``):
reads, commits and transaction RPCs (a transaction is one call of three RPCs: begin, its
read, commit); bytes are the serialized writes of the commits.

    .venv/bin/python -m bench.hitl [--samples 100] [--races 5] [--racers 6]

Needs ``scripts/stack up --profile test``; the user's documents and threads are deleted.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import BaseModel

from bench.turn import stack_settings
from shared.adapters.clock import SystemClock
from shared.app.resume import ResumeService
from shared.app.turn import TurnService
from shared.deps import Deps
from shared.errors import AppError
from shared.fakes.scripted_llm import HashEmbedder, ScriptedLLM
from shared.graph.nodes.classification import Classification
from shared.models.wire import ResumeRequest, TurnRequest, TurnResponse
from shared.ports import LLMRequest
from testkit.fakes import FIRESTORE_STORES, in_memory_stores
from testkit.probes import Probe, count_firestore

SIMPLE = {
    "route": "simple", "entities": [], "temporal_references": [], "language": "en",
    "has_extractable_facts": False, "has_preferences": False,
    "needs_semantic_retrieval": False, "needs_temporal_retrieval": False,
}  # fmt: skip
ACT = "Book me the gym on Friday at 3pm"


def model(request: LLMRequest, schema: type[BaseModel] | None) -> Any:
    if schema is Classification:
        acting = request.messages[-1].text == ACT
        return {**SIMPLE, "route": "complex"} if acting else SIMPLE
    if schema is None:
        return "Done."
    return {"steps": [{"id": "s1", "agent": "productivity", "goal": ACT}]}  # the planner


def bench_deps(probe: Probe) -> Deps:
    settings = stack_settings()
    stores = in_memory_stores(SystemClock(), leave_out=FIRESTORE_STORES)  # measured: real
    deps = Deps(settings, llm=ScriptedLLM(handler=model), embedder=HashEmbedder(64), **stores)
    count_firestore(deps._firestore, probe)
    _count_bytes(deps._firestore, probe)
    return deps


def _count_bytes(client: Any, probe: Probe) -> None:
    api = client._firestore_api
    commit = api.commit

    @functools.wraps(commit)
    def counted(*args: Any, **kwargs: Any) -> Any:
        request = kwargs.get("request") or (args[0] if args else {})
        writes = request.get("writes") if isinstance(request, dict) else request.writes
        for write in writes or ():
            size = _size(write)
            probe.add("fs.bytes", size)
            if "/checkpoint" in write.update.name:  # checkpoints and their chunks
                probe.add("cp.bytes", size)
        return commit(*args, **kwargs)

    api.commit = counted


def _size(message: Any) -> int:
    """A write's serialized size (a raw protobuf, or a proto-plus wrapper of one)."""
    if hasattr(message, "ByteSize"):
        return int(message.ByteSize())
    return int(type(message).pb(message).ByteSize())


class Sample:
    def __init__(self, probe: Probe, run: Any) -> None:
        mark, started = probe.snapshot(), time.perf_counter()
        self.result = run()
        self.ms = (time.perf_counter() - started) * 1000
        self.counts, _ = probe.since(mark)


def turn(deps: Deps, user: str, text: str, chat_id: str | None = None) -> TurnResponse:
    request = TurnRequest(chat_id=chat_id, message=text, client_message_id=uuid.uuid4().hex)
    return TurnService(deps).run(user, request)


def resume(deps: Deps, user: str, asked: TurnResponse) -> TurnResponse:
    assert asked.interrupt is not None, "the acting request must ask for approval"
    request = ResumeRequest(
        chat_id=asked.chat_id, interrupt_id=asked.interrupt.id, answer="approve"
    )
    service = ResumeService(deps)
    return service.turns.run_prepared(service.prepare(user, request))


def checkpoint_of_a_long_chat(deps: Deps, probe: Probe, user: str) -> int:
    chat = turn(deps, user, "What is a good name for a cat?").chat_id
    for _ in range(9):  # 20 messages in all
        turn(deps, user, "And one for a dog?", chat)
    return Sample(probe, lambda: turn(deps, user, ACT, chat)).counts["cp.bytes"]


def race(deps: Deps, user: str, racers: int) -> tuple[float, Counter[str]]:
    """``racers`` answers to one approval at once: seconds until all are settled, outcomes."""
    asked = turn(deps, user, ACT)
    assert asked.interrupt is not None
    request = ResumeRequest(chat_id=asked.chat_id, interrupt_id=asked.interrupt.id, answer="1")

    def answer(_: int) -> str:
        try:
            ResumeService(deps).prepare(user, request)
        except AppError as error:
            return error.code
        return "claimed"

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=racers) as pool:
        outcomes = Counter(pool.map(answer, range(racers)))
    return time.perf_counter() - started, outcomes


def row(label: str, samples: list[Sample]) -> str:
    def mean(key: str) -> float:
        return statistics.fmean(s.counts[key] for s in samples)

    times = sorted(s.ms for s in samples)
    p50, p95 = times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.95))]
    calls = mean("fs.reads") + mean("fs.commits") + mean("fs.tx")
    return (
        f"{label:<13} {calls:5.1f} {mean('fs.reads'):5.1f} {mean('fs.commits'):7.1f} "
        f"{mean('fs.tx'):3.1f} {mean('fs.bytes'):8.0f} {mean('cp.bytes'):8.0f} "
        f"{p50:7.1f} {p95:7.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--races", type=int, default=5)
    parser.add_argument("--racers", type=int, default=6)
    args = parser.parse_args()
    probe = Probe()
    deps = bench_deps(probe)
    user = f"bench-hitl-{uuid.uuid4().hex[:8]}"
    plain, asking, resumed = [], [], []
    try:
        for index in range(args.warmup + args.samples):
            simple = Sample(probe, lambda: turn(deps, user, "What is a good name for a cat?"))
            asked = Sample(probe, lambda: turn(deps, user, ACT))
            answer = Sample(probe, functools.partial(resume, deps, user, asked.result))
            if index >= args.warmup:
                plain.append(simple)
                asking.append(asked)
                resumed.append(answer)
        long_chat = checkpoint_of_a_long_chat(deps, probe, user)
        races = [race(deps, user, args.racers) for _ in range(args.races)]
    finally:
        deps.account_conversations.delete_user(user)
    print(f"bench.hitl: {args.samples} samples each, Firestore emulator, model at 0 ms")
    print("path           RPCs reads commits tx    bytes  cp.bytes  p50 ms  p95 ms")
    print(row("plain turn", plain))
    print(row("asking turn", asking))
    print(row("resume", resumed))
    print(f"checkpoint of a question after 20 messages: {long_chat} bytes")
    outcomes = sum((o for _, o in races), Counter[str]())
    seconds = sorted(t for t, _ in races)
    print(
        f"{args.racers} racing answers to one question, {args.races} times: "
        f"settled in {seconds[len(seconds) // 2]:.2f} s (median), max {seconds[-1]:.2f} s; "
        f"outcomes {dict(outcomes)}"
    )
    rpcs = statistics.fmean(
        s.counts["fs.reads"] + s.counts["fs.commits"] + s.counts["fs.tx"] for s in resumed
    )
    # A transaction is one call of three RPCs (BeginTransaction, its read, Commit).
    calls = rpcs - 2 * statistics.fmean(s.counts["fs.tx"] for s in resumed)
    verdict = "met" if calls <= 4 else "not met"
    measured = f"{calls:.1f} calls ({rpcs:.1f} RPCs)"
    print(f"target: at most 4 Firestore calls per resume: {measured}, {verdict}")


if __name__ == "__main__":
    main()
