"""Per-turn orchestration overhead: ``TurnService`` on the real local stack, model at 0 ms.

Every store is the test stack's (Firestore emulator, Redis, PostgreSQL + pgvector with the
stack's key-encryption key, the Cloud Tasks emulator): only the model (``ScriptedLLM``
answering at once by schema) and the embedder (``HashEmbedder``) are replaced, so what is
measured is the graph, the adapters and their round trips. The understanding tier runs as
in production (MiniLM in this process, spaCy, dateparser), so its time is in the figures.
Four paths, each in one chat reused turn after turn (so history builds up and is summarized
now and then), after warm-up turns that are not counted:

- **greeting**: "Hi!", the deterministic fast path (no model, no memory, no tier);
- **simple**: a question the tier leaves to the model, classified ``simple``, no flags;
- **full memory**: one the tier leaves open too: semantic and temporal retrieval,
  extractable facts (an extraction task is enqueued), "Anna" and "my sister" resolving to a
  seeded person with facts;
- **statement**: a statement the tier reads whole: no classify call, its facts carried on
  the extraction task (no extraction call either).

Per path it prints who decided the intent (rule, understanding tier, model) and the model
calls a turn made before its reply.

Then the same three as the first turn of a new chat. Every chat is made first, untimed, as
``/v1`` clients make it (``POST /v1/chats``, one Firestore create), then the turn is timed.
Printed: p50/p95/max of prepare + events (``time.perf_counter``), time to the first chunk,
round trips per turn per store (counted at the client libraries, see ``testkit/probes.py``),
time spent in each store, the nodes' own timings from the turn record, and the targets it
is held to.

    .venv/bin/python -m bench.turn [--turns 200] [--warmup 20] [--new-chat-turns 50]

``--realistic [--realistic-turns 30] [--speed MODEL=MS,TPS ...]``: after the table, whole
turns with the faithful Vertex fake at the models' published speeds, the design before
(classification, then the reply) and now (a speculative reply) side by side: time to first
and last token per path, calls before the first token, tokens, dropped replies; see
bench/turn_realistic.py.

``--local [--rounds 3] [--concurrent 4] [--service OPTIONS]``: whole turns on the local model,
see bench/turn_local.py.

Needs ``scripts/stack up --profile test``. Runs as a fresh user, in a scratch PostgreSQL
database (migrated, dropped at the end) and a paused scratch Cloud Tasks queue (deleted at the
end, so no extraction runs); the user's Firestore documents and Redis keys are deleted too.
"""

from __future__ import annotations

import argparse
import shlex
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from google.cloud import tasks_v2
from pydantic import BaseModel

from bench.turn_report import PathFigures, Sample, report
from shared.adapters.cloud_tasks import build_tasks_client
from shared.adapters.local_embedder import LocalEmbedder
from shared.adapters.postgres import Database, connect, run_outside_transaction
from shared.app.turn import Chunk, TurnService
from shared.config import Settings
from shared.deps import Deps
from shared.fakes.scripted_llm import HashEmbedder, ScriptedLLM
from shared.graph.nodes.classification import Classification
from shared.models.domain import AssistantProfile, TurnRecord
from shared.models.memory import SELF, ExtractionChanges, FactDraft, Person
from shared.models.wire import TurnRequest
from shared.ports import LLMRequest
from shared.services.memory.windows import window_for
from shared.understanding import UnderstandingTier
from testkit.probes import Probe, count_firestore, count_redis, count_tasks, counting_connect
from testkit.stack_env import require_stack_env

MESSAGES = {
    "greeting": "Hi!",
    "simple": "Can you explain how tides work?",  # the tier settles "a name for a cat"
    "full": "Tell me what my sister Anna is up to next week.",  # the tier leaves it open
    "statement": "My sister Anna lives in Berlin and she loves climbing.",
}
LABELS = {
    "greeting": "greeting",
    "simple": "simple",
    "full": "full memory",
    "statement": "statement",
}
SIMPLE = {
    "route": "simple", "entities": [], "temporal_references": [], "language": "en",
    "has_extractable_facts": False, "has_preferences": False,
    "needs_semantic_retrieval": False, "needs_temporal_retrieval": False,
}  # fmt: skip
FULL = {
    **SIMPLE, "entities": [{"name": "Anna", "role": "sister"}],
    "temporal_references": ["next week"], "has_extractable_facts": True,
    "needs_semantic_retrieval": True, "needs_temporal_retrieval": True,
}  # fmt: skip
ANSWER = "Here is a short answer for you."


class ScriptedModel:
    """The model's side of the bench: the classification by message, short texts otherwise.
    Keeps the last text request's system prompt (it shows what memory the turn found)."""

    last_system = ""
    before_reply = 0  # calls since the last reply: classification, planning

    def __call__(self, request: LLMRequest, schema: type[BaseModel] | None) -> Any:
        if schema is not None:
            self.before_reply += 1
        if schema is Classification:
            return FULL if "Anna" in request.messages[-1].text else SIMPLE
        if schema is None:  # the streamed answer, or a summary
            self.last_system = request.system
            return ANSWER
        raise AssertionError(f"the bench scripts no {schema.__name__} call")


# -- the stack --------------------------------------------------------------------------------
def stack_settings() -> Settings:
    require_stack_env()
    return Settings(env="test", model_provider="scripted", rate_limit_per_minute=10**9)


@contextmanager
def scratch_database(base: Settings) -> Iterator[str]:
    """A fresh database on the stack's server, migrated; dropped afterwards."""
    from shared.adapters.migrations import apply_migrations

    assert base.database_url, "the test stack's env has no DATABASE_URL"
    name = f"bench_turn_{uuid.uuid4().hex[:10]}"
    run_outside_transaction(base, f"CREATE DATABASE {name}")
    try:
        url = f"{base.database_url.rsplit('/', 1)[0]}/{name}"
        conn = connect(base.model_copy(update={"database_url": url}))
        try:
            apply_migrations(conn)
        finally:
            conn.close()
        yield url
    finally:
        run_outside_transaction(base, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@contextmanager
def paused_queue(settings: Settings) -> Iterator[str]:
    """A scratch Cloud Tasks queue that holds tasks without dispatching them."""
    client = build_tasks_client(settings)
    name = f"bench-turn-{uuid.uuid4().hex[:10]}"
    path = client.queue_path(settings.gcp_project, settings.tasks_location, name)
    client.create_queue(
        parent=client.common_location_path(settings.gcp_project, settings.tasks_location),
        queue=tasks_v2.Queue(name=path),
    )
    client.pause_queue(name=path)
    try:
        yield name
    finally:
        client.purge_queue(name=path)
        client.delete_queue(name=path)


def bench_deps(settings: Settings, probe: Probe, model: ScriptedModel) -> Deps:
    """``Deps`` defaults for every store, counted; the scripted model and embedder; the
    understanding tier as production builds it (MiniLM in process)."""
    deps = Deps(
        settings,
        llm=ScriptedLLM(handler=model),
        embedder=HashEmbedder(settings.embedding_dimension),
        understanding=UnderstandingTier(LocalEmbedder()),
        _database=Database(settings, factory=counting_connect(settings, probe)),
    )
    count_firestore(deps._firestore, probe)
    count_redis(deps._redis, probe)
    count_tasks(deps.tasks._client, probe)  # type: ignore[attr-defined]
    return deps


def seed_memory(deps: Deps, user: str) -> None:
    """Anna (the user's sister) and five facts, two of them anchored in next week."""
    anna = Person(
        id=str(uuid.uuid4()),
        user_id=user,
        display_name="Anna",
        role_to_user="sibling",
        descriptors={"relation": "sister"},
    )
    deps.contacts.add_person(anna)
    now = deps.clock.now()
    start, end = window_for("next week", now, AssistantProfile().timezone)
    middle = start + (end - start) / 2
    facts: list[tuple[str, Person | None, Any]] = [
        ("The user lives in Bern", None, None),
        ("The user works as a nurse", None, None),
        ("Anna works as an architect in Basel", anna, None),
        ("Anna plans to visit Lisbon next week", anna, middle),
        ("Anna has a dentist appointment next week", anna, middle + timedelta(hours=3)),
    ]
    drafts = [
        FactDraft(
            text=text,
            type="Schedule" if anchor else "Other",
            subject_entity_id=person.id if person else None,
            relation_to_user=person.role_to_user if person else SELF,
            confidence=0.9,
            temporal_marker="next week" if anchor else None,
            time_anchor=anchor,
            embedding=deps.embedder.embed([text])[0],
            embedding_model=deps.embedder.model_name,
            idempotency_key=f"seed-{i}",
        )
        for i, (text, person, anchor) in enumerate(facts)
    ]
    deps.facts.apply_extraction(f"seed-{user}", user, ExtractionChanges(new_facts=drafts), now)


# -- measuring --------------------------------------------------------------------------------
class BenchFailure(Exception):
    """A turn did not go down the path it was meant to (or a node failed)."""


class Bench:
    def __init__(self, deps: Deps, probe: Probe, model: ScriptedModel, user: str) -> None:
        self.deps, self.probe, self.model, self.user = deps, probe, model, user
        self.service = TurnService(deps)

    def turn(self, path: str, chat_id: str | None) -> tuple[Sample, str]:
        request = TurnRequest(
            chat_id=chat_id, message=MESSAGES[path], client_message_id=uuid.uuid4().hex
        )
        mark = self.probe.snapshot()
        self.model.before_reply = 0
        started = _now()
        prepared = self.service.prepare(self.user, request)
        prepared_at, first_chunk, chat = _now(), 0.0, ""
        for event in self.service.events(prepared):
            if isinstance(event, Chunk):
                first_chunk = first_chunk or _now()
            else:
                chat = event.response.chat_id
        ended = _now()
        counts, store_ms = self.probe.since(mark)
        record = self.deps.conversations.get_turn(self.user, request.client_message_id)
        metadata = _checked(path, record)
        sample = Sample(
            ms=ended - started,
            prepare_ms=prepared_at - started,
            first_chunk_ms=(first_chunk or ended) - started,
            graph_ms=metadata.graph_ms,
            counts=counts,
            store_ms=store_ms,
            nodes=[(run.node, run.ms) for run in metadata.nodes],
            decided_by=metadata.decided_by or "",
            model_calls=self.model.before_reply,
        )
        return sample, chat

    def path(self, path: str, turns: int, warmup: int, new_chats: bool) -> list[Sample]:
        chat_id, samples = None, []
        for i in range(warmup + turns):
            if new_chats or chat_id is None:  # as /v1 clients do: made first (not timed)
                chat_id = f"bench-{uuid.uuid4().hex[:16]}"
                self.deps.conversations.create_chat(self.user, chat_id, self.deps.clock.now())
            sample, chat_id = self.turn(path, chat_id)
            if i >= warmup:
                samples.append(sample)
        if path == "full" and "Known about Anna" not in self.model.last_system:
            raise BenchFailure("full memory: retrieval found nothing about Anna")
        return samples


def _now() -> float:
    return time.perf_counter() * 1000


def _checked(path: str, record: TurnRecord | None) -> Any:
    metadata = record.metadata if record else None
    if metadata is None:
        raise BenchFailure(f"{path}: the turn left no record")
    if metadata.outcome != "ok":
        raise BenchFailure(
            f"{path}: node {metadata.failed_node} failed ({metadata.error_code}); "
            "the fallback reply was recorded"
        )
    nodes = {run.node for run in metadata.nodes}
    expected = {
        "greeting": metadata.route == "greeting" and metadata.fast_path,
        "simple": metadata.route == "simple" and "semantic_retrieval" not in nodes,
        "full": {"entity_resolution", "semantic_retrieval", "temporal_retrieval"} <= nodes
        and metadata.extraction_enqueued,
        "statement": metadata.decided_by == "understanding" and metadata.extraction_enqueued,
    }
    if not expected[path]:
        raise BenchFailure(f"{path}: went another way: route {metadata.route}, nodes {nodes}")
    return metadata


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--new-chat-turns", type=int, default=50)
    parser.add_argument("--local", action="store_true", help="turns on the local model")
    parser.add_argument("--rounds", type=int, default=3, help="--local: rounds of each kind")
    parser.add_argument("--concurrent", type=int, default=4, help="--local: turns at once")
    parser.add_argument("--mix", default="default", help="--local: default, settled or replies")
    parser.add_argument(
        "--service",
        help="--local: options for a model service of the bench's own, e.g. '--parallel 2'",
    )
    parser.add_argument("--show", action="store_true", help="--local: print every turn")
    parser.add_argument("--alone", type=int, default=3, help="--local: runs of each message alone")
    parser.add_argument("--realistic", action="store_true", help="whole turns, models timed")
    parser.add_argument("--realistic-turns", type=int, default=30)
    parser.add_argument("--speed", action="append", default=[], help="--realistic: M=MS,TPS")
    args = parser.parse_args()
    if args.local:
        from bench import turn_local

        options = None if args.service is None else shlex.split(args.service)
        local = turn_local.Options(args.rounds, args.concurrent, args.mix, args.alone, args.show)
        turn_local.main(local, options)
        return
    base = stack_settings()
    user = f"bench-turn-{uuid.uuid4().hex[:8]}"
    with scratch_database(base) as url, paused_queue(base) as queue:
        settings = base.model_copy(update={"database_url": url, "extraction_queue": queue})
        probe, model = Probe(), ScriptedModel()
        deps = bench_deps(settings, probe, model)
        try:
            seed_memory(deps, user)
            bench, figures = Bench(deps, probe, model, user), []
            for new_chats, turns, warmup in (
                (False, args.turns, args.warmup),
                (True, args.new_chat_turns, 2),
            ):
                for path in MESSAGES:
                    samples = bench.path(path, turns, warmup, new_chats)
                    label = LABELS[path] + (", new chat" if new_chats else "")
                    figures.append(PathFigures(label, samples))
        except BenchFailure as failure:
            raise SystemExit(f"bench.turn: {failure}") from failure
        finally:
            deps.account_conversations.delete_user(user)
            deps.account_cache.delete_user(user)
            deps._database.close()
    report(figures, args.turns, args.warmup)
    if args.realistic:  # what a user waits for, on the faithful fake at a model's speed
        from bench import turn_realistic
        from testkit.model_latency import PUBLISHED, parse_speed

        speeds = PUBLISHED | dict(parse_speed(option) for option in args.speed)
        turn_realistic.run(base, args.realistic_turns, 3, speeds)


if __name__ == "__main__":
    main()
