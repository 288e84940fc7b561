"""What a user waits for: ``bench.turn --realistic``, whole turns on the faithful Vertex fake
answering at a model's speed (``testkit.model_latency``: time to first token and output
tokens per second per model, published figures by default).

The production adapter (``VertexLLM`` over google-genai) talks to the fake, which streams the
reply in events over time; the understanding tier runs as in production. Each path runs in
both designs on the same stack, one after the other, turn for turn:

- **before**: one call after the other (``SPECULATIVE_REPLY=false``);
- **now**: beside the classification call, the memory the tier's nearest label asks for is
  read and the reply started with it (``shared.graph.early_reply``), kept when the
  classification asks for the same memory work and the reply's request comes out the same.

Paths: greeting, simple (the tier leaves it open, the model says simple, no memory), recall
(open, the model asks for retrieval: "What do you remember about me?"), full memory (open,
a person and a time: resolution, semantic and temporal retrieval), miss (open, the tier's
nearest label asks for no memory but the model asks for retrieval: the guess is wrong, the
speculation dropped), statement (the tier settles it). Printed per path and design: time to
the first chunk and to the end (p50, p95), model calls started before the first chunk, tokens
per turn (input + output, as the fake counted them; a dropped stream counted whole, an upper
bound), and the share of turns that paid for a dropped reply. One bare reply call's time to
first token, measured the same way, is the reference of the target (within 1.2x, p50).
"""

from __future__ import annotations

import json
import statistics
import time
import uuid
from dataclasses import dataclass
from typing import Any

from bench.turn import (
    FULL,
    SIMPLE,
    ScriptedModel,
    bench_deps,
    paused_queue,
    scratch_database,
    seed_memory,
)
from bench.turn import (
    MESSAGES as BENCH_MESSAGES,
)
from bench.turn_report import pct
from shared.adapters.vertex_client import build_vertex_client
from shared.adapters.vertex_llm import VertexLLM
from shared.app.turn import Chunk, TurnService
from shared.config import Settings
from shared.deps import Deps
from shared.models.wire import TurnRequest
from shared.ports import ChatTurn, LLMRequest
from testkit.model_latency import Speed, Timed
from testkit.probes import Probe
from testkit.vertex_replies import RecordedRequest
from testkit.vertex_server import FakeVertexServer

MESSAGES = {
    "greeting": BENCH_MESSAGES["greeting"],
    "simple": BENCH_MESSAGES["simple"],
    "recall": "What do you remember about me?",
    "full": BENCH_MESSAGES["full"],
    "miss": "Write me a poem about autumn",
    "statement": BENCH_MESSAGES["statement"],
}
RECALL = {**SIMPLE, "needs_semantic_retrieval": True}
TARGET_RATIO = 1.2
REPLY = " ".join(["Here is a short, plain answer to what you asked, in a few sentences."] * 6)
TOKEN = "bench-realistic-token"


def answer(request: RecordedRequest) -> str:
    """The model's side: classification by message, a reply of about 100 tokens otherwise."""
    config = request.body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema")
    said = str(((request.body.get("contents") or [{}])[-1].get("parts") or [{}])[0].get("text"))
    if schema is None:
        return REPLY
    fields = set((schema.get("properties") or {}).keys())
    if "route" in fields and "has_extractable_facts" in fields:
        wants_memory = "remember" in said or "poem" in said
        chosen = FULL if "Anna" in said else RECALL if wants_memory else SIMPLE
        return json.dumps(chosen)
    raise AssertionError(f"the bench scripts no structured call with {sorted(fields)}")


@dataclass
class Turn:
    first_ms: float
    last_ms: float
    calls_before_first: int
    rounds: int  # of those, waited for one after the other
    tokens: int
    dropped: bool


def _turn(service: TurnService, timed: Timed, user: str, chat: str, message: str) -> Turn:
    request = TurnRequest(chat_id=chat, message=message, client_message_id=uuid.uuid4().hex)
    mark, started = len(timed.calls), time.perf_counter()
    first = 0.0
    for event in service.events(service.prepare(user, request)):
        if isinstance(event, Chunk):
            first = first or time.perf_counter()
    ended = time.perf_counter()
    time.sleep(0.2)  # a dropped stream's request is logged by now
    calls = timed.since(mark)
    first = first or ended
    streams = [c for c in calls if c.rpc == "streamGenerateContent"]
    return Turn(
        first_ms=(first - started) * 1000,
        last_ms=(ended - started) * 1000,
        calls_before_first=sum(1 for c in calls if c.started < first),
        rounds=_rounds([c.started for c in calls if c.started < first]),
        tokens=sum(c.input_tokens + c.output_tokens for c in calls),
        dropped=len(streams) > 1,
    )


def _rounds(starts: list[float]) -> int:
    """Calls in series: a call started over 100 ms after the one before it waited for it
    (every timed call takes 290 ms or more before its first byte)."""
    found, last = 0, -1.0
    for started in sorted(starts):
        if last < 0 or started - last > 0.1:
            found += 1
        last = started
    return found


def _one_call(llm: VertexLLM, n: int) -> list[float]:
    request = LLMRequest(
        system="You are a helpful assistant.", messages=[ChatTurn(role="user", text="Hi")]
    )
    found = []
    for _ in range(n):
        started = time.perf_counter()
        for _chunk in llm.stream(request):
            found.append((time.perf_counter() - started) * 1000)
            break
    return found


def _deps(settings: Settings, probe: Probe) -> Deps:
    deps = bench_deps(settings, probe, ScriptedModel())
    deps.__dict__["llm"] = VertexLLM(build_vertex_client(settings), settings.models())
    return deps


def run(base: Settings, turns: int, warmup: int, speeds: dict[str, Speed]) -> None:
    timed = Timed(answer, speeds)
    user = f"bench-ttft-{uuid.uuid4().hex[:8]}"
    with (
        FakeVertexServer(token=TOKEN, fallback=timed) as fake,
        scratch_database(base) as url,
        paused_queue(base) as queue,
    ):
        common: dict[str, Any] = {
            "database_url": url, "extraction_queue": queue, "model_provider": "vertex",
            "vertex_base_url": fake.base_url, "vertex_access_token": TOKEN,
        }  # fmt: skip
        designs = {
            "before": _deps(
                base.model_copy(update={**common, "speculative_reply": False}), Probe()
            ),
            "now": _deps(base.model_copy(update={**common, "speculative_reply": True}), Probe()),
        }
        results: dict[tuple[str, str], list[Turn]] = {}
        try:
            seed_memory(designs["now"], user)
            services = {name: TurnService(deps) for name, deps in designs.items()}
            chats = {key: f"ttft-{uuid.uuid4().hex[:12]}" for key in services}
            for key, chat in chats.items():
                designs[key].conversations.create_chat(user, chat, designs[key].clock.now())
            for path, message in MESSAGES.items():
                for i in range(warmup + turns):
                    for name, service in services.items():  # interleaved: same conditions
                        turn = _turn(service, timed, user, chats[name], message)
                        if i >= warmup:
                            results.setdefault((path, name), []).append(turn)
            reference = _one_call(designs["now"].llm, turns)  # type: ignore[arg-type]
        finally:
            designs["now"].account_conversations.delete_user(user)
            designs["now"].account_cache.delete_user(user)
            for deps in designs.values():
                deps._database.close()
    _report(results, reference, timed)


def _report(results: dict[tuple[str, str], list[Turn]], reference: list[float], t: Timed) -> None:
    one = statistics.median(reference)
    print("\nTime to first token with the model at its published speed (bench.turn --realistic)")
    for model, speed in sorted(t.speeds.items()):
        label = " (assumed: its predecessor's figure)" if speed.assumed else ""
        print(f"  {model}: {speed.first_token_ms:.0f} ms to first token, "
              f"{speed.tokens_per_second:.0f} tokens/s{label}")  # fmt: skip
    print(f"  one reply call alone: first token p50 {one:.0f} ms (the reference)\n")
    head = f"{'path':<11}{'design':<8}{'first p50':>10}{'p95':>7}{'x one':>7}"
    print(head + f"{'last p50':>10}{'p95':>7}{'calls':>7}{'serial':>7}{'tokens':>8}{'dropped':>9}")
    for (path, design), turns in results.items():
        firsts, lasts = [t.first_ms for t in turns], [t.last_ms for t in turns]
        calls = statistics.median([t.calls_before_first for t in turns])
        rounds = statistics.median([t.rounds for t in turns])
        tokens = statistics.mean([t.tokens for t in turns])
        dropped = sum(t.dropped for t in turns) / len(turns)
        ratio = pct(firsts, 50) / one
        print(
            f"{path:<11}{design:<8}{pct(firsts, 50):>8.0f}ms{pct(firsts, 95):>5.0f}ms"
            f"{ratio:>6.2f}x{pct(lasts, 50):>8.0f}ms{pct(lasts, 95):>5.0f}ms"
            f"{calls:>7.0f}{rounds:>7.0f}{tokens:>8.0f}{dropped:>8.0%}"
        )
    print(
        f"\ncalls: model calls started before the first chunk (p50); serial: of those, waited "
        f"for one after the other; tokens: mean per turn; "
        f"dropped: turns that paid for a discarded reply. Target: a turn the tier leaves open "
        f"within {TARGET_RATIO}x of one call's first token (p50)."
    )
