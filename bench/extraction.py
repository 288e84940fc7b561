"""Extraction throughput: tasks per second through ``ExtractionService`` with the scripted
model (zero latency), on the in-memory fakes and on the test stack's PostgreSQL + pgvector.

Run from the repository root: ``.venv/bin/python -m bench.extraction [--tasks N]``. The
PostgreSQL figure needs ``scripts/stack up --profile test`` (it reads ``.stack-test/env``) and
runs in a fresh database, migrated, then dropped. Each task extracts three facts that walk the
common paths: a fact about the user (often superseding the home city), one about a person the
turn resolved, and one about a colleague named in the message (created on first mention,
found by name afterwards). Tasks run one after the other, as one function instance serves them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from shared.adapters.clock import SystemClock
from shared.app.extraction import ExtractionService
from shared.config import Settings
from shared.deps import Deps
from shared.fakes.scripted_llm import HashEmbedder, ScriptedLLM
from shared.models.domain import ExtractionTask, ResolvedEntity
from shared.models.extraction import Extraction
from shared.models.memory import Person
from shared.ports import LLMRequest
from testkit.stack_env import load_stack_env

CITIES = ["Bern", "Basel", "Zurich", "Geneva", "Lucerne", "Lugano", "Chur"]
HOBBIES = ["jazz", "chess", "sailing", "pottery", "climbing", "tango", "baking", "opera"]
COLLEAGUES = ["Lukas", "Mia", "Noah", "Lea", "Elias", "Lina", "Jonas", "Nora", "Leon", "Emma"]
JOBS = ["an accountant", "a designer", "an engineer", "a lawyer", "a nurse"]


def anna_of(user: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"bench:{user}:anna"))


def model_reply(request: LLMRequest, schema: type[BaseModel] | None) -> BaseModel:
    """The extraction the message asks for: "message <user> <k>" is the user's k-th task."""
    if schema is not Extraction:
        raise AssertionError(f"the bench scripts no {schema} call")
    k = int(request.messages[0].text.rsplit(" ", 1)[1])
    colleague = COLLEAGUES[k % len(COLLEAGUES)]
    return Extraction.model_validate(
        {
            "facts": [
                {"text": f"Alice lives in {CITIES[k % len(CITIES)]}", "type": "Other",
                 "about": "user", "confidence": 0.9},
                {"text": f"Anna enjoys {HOBBIES[k % len(HOBBIES)]}", "type": "Hobby",
                 "about": "Anna", "confidence": 0.9},
                {"text": f"{colleague} works as {JOBS[k // len(COLLEAGUES) % len(JOBS)]}",
                 "type": "Work", "about": colleague, "confidence": 0.85},
            ],
            "entities": [{"name": colleague, "role": "colleague", "descriptors": []}],
            "topics": ["work"],
        }
    )  # fmt: skip


def task_for(i: int, users: int) -> ExtractionTask:
    user = f"bench-user-{i % users}"
    return ExtractionTask(
        user_id=user,
        chat_id=f"chat-{user}",
        turn_id=f"t{i}",
        message_id=f"t{i}-u",
        text=f"message {i % users} {i // users}",
        resolved_entities=[
            ResolvedEntity(mention="Anna", person_id=anna_of(user), confidence=0.95)
        ],
        timezone="Europe/Zurich",
        enqueued_at=datetime.now(UTC),
    )


def run(deps: Deps, tasks: int, users: int) -> dict[str, Any]:
    for u in range(users):
        user = f"bench-user-{u}"
        deps.contacts.add_person(
            Person(id=anna_of(user), user_id=user, display_name="Anna", role_to_user="sibling")
        )
    service = ExtractionService(deps)
    seconds: list[float] = []
    outcomes: Counter[str] = Counter()
    started = time.perf_counter()
    for i in range(tasks):
        begun = time.perf_counter()
        outcome = service.run(task_for(i, users))
        seconds.append(time.perf_counter() - begun)
        for name, value in outcome.as_body().items():
            if isinstance(value, int):
                outcomes[name] += value
    total = time.perf_counter() - started
    redelivered = time.perf_counter()
    duplicates = sum(service.run(task_for(i, users)).duplicate for i in range(min(tasks, 200)))
    redelivery = (time.perf_counter() - redelivered) / min(tasks, 200)
    return {
        "tasks/s": tasks / total,
        "p50 ms": statistics.median(seconds) * 1000,
        "p95 ms": statistics.quantiles(seconds, n=20)[18] * 1000,
        "redelivery ms": redelivery * 1000,
        "duplicates": duplicates,
        **outcomes,
    }


def deps_with(settings: Settings, **stores: Any) -> Deps:
    return Deps(
        settings,
        clock=SystemClock(),
        llm=ScriptedLLM(handler=model_reply),
        embedder=HashEmbedder(settings.embedding_dimension),
        **stores,
    )


def memory_deps(settings: Settings) -> Iterator[Deps]:
    from shared.fakes.facts import FakeContactStore, FakeFactStore

    contacts = FakeContactStore()
    yield deps_with(settings, facts=FakeFactStore(contacts), contacts=contacts)


@contextmanager
def postgres_deps() -> Iterator[Deps]:
    """Real adapters on a fresh, migrated database of the test stack, dropped afterwards."""
    from shared.adapters.keyring_local import LocalKek
    from shared.adapters.migrations import apply_migrations
    from shared.adapters.postgres import Database, connect, run_outside_transaction
    from shared.adapters.postgres_contacts import PostgresContactStore
    from shared.adapters.postgres_facts import PostgresFactStore
    from shared.adapters.postgres_keyring import PostgresKeyRing

    base = Settings()
    if not base.database_url or not base.local_kek_file:
        raise SystemExit("the test stack's env has no DATABASE_URL/LOCAL_KEK_FILE")
    name = f"bench_{uuid.uuid4().hex[:10]}"
    run_outside_transaction(base, f"CREATE DATABASE {name}")
    settings = base.model_copy(
        update={"database_url": f"{base.database_url.rsplit('/', 1)[0]}/{name}"}
    )
    db = None
    try:
        conn = connect(settings)
        try:
            apply_migrations(conn)
        finally:
            conn.close()
        db = Database(settings)
        keys = PostgresKeyRing(db, LocalKek(settings.local_kek_file or ""))
        facts, contacts = PostgresFactStore(db, keys), PostgresContactStore(db, keys)
        yield deps_with(settings, facts=facts, contacts=contacts)
    finally:
        if db is not None:
            db.close()
        run_outside_transaction(base, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def show(label: str, figures: dict[str, Any]) -> None:
    print(f"\n{label}")
    for name, value in figures.items():
        print(
            f"  {name:>14}: {value:,.1f}" if isinstance(value, float) else f"  {name:>14}: {value}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--backend", choices=["memory", "postgres", "both"], default="both")
    args = parser.parse_args()
    stack_up = load_stack_env()
    os.environ["ENV"], os.environ["MODEL_PROVIDER"] = "test", "scripted"
    print(f"extraction bench: {args.tasks} tasks, {args.users} users, 3 facts per task")
    if args.backend in ("memory", "both"):
        for deps in memory_deps(Settings()):
            show("in-memory fakes", run(deps, args.tasks, args.users))
    if args.backend in ("postgres", "both"):
        if not stack_up:
            print(
                "\nPostgreSQL: skipped, the test stack is not up (scripts/stack up --profile test)"
            )
            return
        with postgres_deps() as deps:
            url = deps.settings.database_url or ""
            where = url.rsplit("@", 1)[-1]  # host:port/db, never the password
            show(f"PostgreSQL + pgvector ({where})", run(deps, args.tasks, args.users))


if __name__ == "__main__":
    main()
