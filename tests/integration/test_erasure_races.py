"""An account erasure overlapping a turn, an extraction or an agent job, interleaved step by
step on the real stores (Firestore emulator, PostgreSQL, Redis): once the erasure returned,
nothing of the user is left and nothing comes back.

The interleavings are fixed by gates in the scripted model (the work waits inside a model
call until the test lets it go) and by conditions the stores show (the erasure's mark, a
lock the erasure waits for), never by timing.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pg8000.native
import pytest
import redis
from google.cloud import firestore
from pydantic import BaseModel

from shared.adapters.postgres import parse_database_url
from shared.agents.spec import AgentPorts, AgentSpec, Tool, ToolContext
from shared.app.agent_delivery import AgentJobService
from shared.app.extraction import ExtractionService
from shared.app.settings.account import AccountAdmin
from shared.app.turn import TurnService
from shared.config import Settings
from shared.deps import Deps
from shared.errors import AccountErased
from shared.fakes.scripted_llm import HashEmbedder, ScriptedLLM
from shared.models.agent_data import Note
from shared.models.domain import ExtractionTask
from shared.models.jobs import AgentJob
from shared.models.wire import TurnRequest
from shared.ports import LLMRequest
from shared.services.ids import turn_id_for
from testkit.faults import wait_until
from tests.e2e.snapshots import firestore_paths, postgres_key_rows

pytestmark = [pytest.mark.stack, pytest.mark.usefixtures("stack_env")]

USER_TABLES = ("facts", "persons", "pending_items", "processed_tasks", "user_keys")


class Gate:
    """Where the work waits: ``reached`` once it is there, on until ``opened``."""

    def __init__(self) -> None:
        self.reached, self.opened = threading.Event(), threading.Event()

    def wait_here(self) -> None:
        self.reached.set()
        assert self.opened.wait(60), "the test never opened the gate"


class Background:
    """A call on a thread: its result or error, once it returned."""

    def __init__(self, call: Callable[[], Any]) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(call,))
        self._thread.start()

    def _run(self, call: Callable[[], Any]) -> None:
        try:
            self.result = call()
        except BaseException as error:
            self.error = error

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def join(self) -> Any:
        self._thread.join(90)
        assert not self._thread.is_alive(), "the work never ended"
        return self.result


@pytest.fixture
def settings() -> Settings:
    return Settings(model_provider="scripted", turn_heartbeat_seconds=0.05)


@pytest.fixture
def deps_for(settings: Settings) -> Iterator[Callable[[ScriptedLLM], Deps]]:
    """Deps over the real stores; their connections are closed after the test (a pool left
    to the garbage collector warns, and warnings are errors)."""
    made: list[Deps] = []

    def make(llm: ScriptedLLM) -> Deps:
        made.append(Deps(settings, llm=llm, embedder=HashEmbedder(settings.embedding_dimension)))
        return made[-1]

    yield make
    for deps in made:
        deps.close()


@pytest.fixture
def user() -> str:
    return f"u{uuid.uuid4().hex[:12]}"


@pytest.fixture
def db() -> firestore.Client:
    return firestore.Client(project=Settings().gcp_project)


@pytest.fixture
def cache() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(Settings().redis_url)
    yield client
    client.close()


def nothing_left(
    db: firestore.Client, cache: redis.Redis, user: str, threads: tuple[str, ...] = ()
) -> None:
    assert firestore_paths(db, user) == {}
    for thread in threads:
        ref = db.collection("checkpoint_threads").document(thread)
        assert not ref.get().exists and list(ref.collections()) == []
    assert postgres_rows(user) == dict.fromkeys(USER_TABLES, 0)
    keys = [k.decode() for k in cache.scan_iter(match=f"*:{user}*", count=1000)]
    assert [k for k in keys if ":rate:" not in k] == []  # rate counters expire within a minute


def postgres_rows(user: str) -> dict[str, int]:
    conn = pg8000.native.Connection(**parse_database_url(Settings().database_url or ""))
    try:
        return {
            table: int(conn.run(f"SELECT count(*) FROM {table} WHERE user_id = :u", u=user)[0][0])
            for table in USER_TABLES
        }
    finally:
        conn.close()


def erasing(db: firestore.Client, user: str) -> bool:
    from shared.adapters.firestore_erasure import erasure_ref

    snap = erasure_ref(db, user).get()
    return snap.exists and (snap.to_dict() or {}).get("erasing_since") is not None


def erasure_waits_for_a_lock() -> bool:
    conn = pg8000.native.Connection(**parse_database_url(Settings().database_url or ""))
    try:
        rows = conn.run("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
        return int(rows[0][0]) > 0
    finally:
        conn.close()


# -- a turn -----------------------------------------------------------------------------------
def test_a_turn_running_when_the_erasure_starts_is_waited_for_and_then_erased(
    deps_for: Callable[[ScriptedLLM], Deps],
    db: firestore.Client,
    cache: redis.Redis,
    user: str,
) -> None:
    gate = Gate()

    def model(request: LLMRequest, schema: Any) -> Any:
        if schema is not None:
            return {"route": "simple", "entities": [], "temporal_references": [],
                    "has_extractable_facts": True, "has_preferences": False,
                    "needs_semantic_retrieval": False, "needs_temporal_retrieval": False,
                    "language": "en"}  # fmt: skip
        gate.wait_here()  # the turn is claimed, holds its lease, and is writing its reply
        return "A reply that is being written while the account goes away"

    deps = deps_for(ScriptedLLM(handler=model, chunk_seconds=0.01))
    request = TurnRequest(message="[facts] I grow tomatoes", client_message_id="m1")
    turn = Background(lambda: TurnService(deps).run(user, request))
    assert gate.reached.wait(60)

    erasure = Background(lambda: AccountAdmin(deps).delete(user))
    assert wait_until(lambda: erasing(db, user), 30)
    with pytest.raises(AccountErased):  # nothing new starts while the erasure runs
        TurnService(deps).run(user, TurnRequest(message="Hello", client_message_id="m2"))
    assert erasure.running  # it waits for the turn that runs

    gate.opened.set()
    turn.join()
    assert erasure.join().deleted, erasure.error
    nothing_left(db, cache, user, threads=(turn_id_for(user, "m1"),))


# -- an extraction ----------------------------------------------------------------------------
def test_an_extraction_that_checked_before_the_erasure_is_waited_for_and_then_erased(
    deps_for: Callable[[ScriptedLLM], Deps],
    db: firestore.Client,
    cache: redis.Redis,
    user: str,
) -> None:
    gate = Gate()

    def model(request: LLMRequest, schema: Any) -> Any:
        gate.wait_here()  # the extraction passed its check and holds the user
        return {"facts": [{"text": "I grow tomatoes", "type": "Other", "about": "user",
                           "confidence": 0.9}], "entities": [], "topics": []}  # fmt: skip

    deps = deps_for(ScriptedLLM(handler=model))
    task = extraction_task(deps, user, enqueued_seconds_ago=1)
    extraction = Background(lambda: ExtractionService(deps).run(task))
    assert gate.reached.wait(60)

    erasure = Background(lambda: AccountAdmin(deps).delete(user))
    assert wait_until(erasure_waits_for_a_lock, 30)  # at the user's lock, erasing nothing yet
    gate.opened.set()
    outcome = extraction.join()
    assert outcome is not None and outcome.status == "stored", extraction.error
    assert erasure.join().deleted, erasure.error
    nothing_left(db, cache, user)
    assert postgres_key_rows(user) == 0


def test_an_extraction_queued_before_the_erasure_and_run_after_it_writes_nothing(
    deps_for: Callable[[ScriptedLLM], Deps],
    db: firestore.Client,
    cache: redis.Redis,
    user: str,
) -> None:
    llm = ScriptedLLM()  # no reply scripted: the model must not even be asked
    deps = deps_for(llm)
    task = extraction_task(deps, user, enqueued_seconds_ago=5)
    assert AccountAdmin(deps).delete(user).deleted
    assert ExtractionService(deps).run(task).status == "erased"
    assert llm.calls == []
    nothing_left(db, cache, user)


def extraction_task(deps: Deps, user: str, enqueued_seconds_ago: float) -> ExtractionTask:
    return ExtractionTask(
        user_id=user,
        chat_id="c1",
        turn_id=f"t-{uuid.uuid4().hex[:8]}",
        message_id="m1-u",
        text="I grow tomatoes",
        enqueued_at=deps.clock.now() - timedelta(seconds=enqueued_seconds_ago),
    )


# -- an agent job -----------------------------------------------------------------------------
class NoteArgs(BaseModel):
    text: str = ""


class SlowNoteTool:
    """Writes a note through the job's ports, once the test lets it: the write of a job
    that was running when the account was erased."""

    name, description, sensitive, acts = "note_later", "Write a note.", False, False
    args_schema = NoteArgs

    def __init__(self, gate: Gate) -> None:
        self._gate = gate
        self.refused: list[str] = []

    def available(self, ports: AgentPorts) -> bool:
        return True

    def run(self, context: ToolContext, args: BaseModel) -> str:
        self._gate.wait_here()
        note = Note(id=context.record_id("note"), title="later", text="written late",
                    created_at=context.ports.clock.now())  # fmt: skip
        try:
            context.ports.agent_data.put_note(context.user_id, note)
        except AccountErased as refused:
            self.refused.append(refused.code)
            raise
        return "written"


class NoteCatalog:
    def __init__(self, tool: SlowNoteTool) -> None:
        self._tool = tool
        self._spec = AgentSpec("noter", "researcher", "notes", "You write notes.", ("note_later",))

    def agent(self, name: str) -> AgentSpec:
        return self._spec

    def tools(self, spec: AgentSpec, ports: AgentPorts) -> tuple[Tool, ...]:
        return (self._tool,)

    def helpers(self) -> tuple[str, ...]:
        return ()


def test_an_agent_job_running_across_the_erasure_writes_nothing_after_it(
    deps_for: Callable[[ScriptedLLM], Deps],
    db: firestore.Client,
    cache: redis.Redis,
    user: str,
) -> None:
    gate = Gate()
    tool = SlowNoteTool(gate)
    steps = iter([
        {"action": "tool", "tool": "note_later", "tool_args": '{"text": "x"}'},
        {"action": "finish", "text": "Noted."},
    ])  # fmt: skip

    def model(request: LLMRequest, schema: Any) -> Any:
        return next(steps)

    deps = deps_for(ScriptedLLM(handler=model))
    job = AgentJob(
        job_id=f"job-{uuid.uuid4().hex[:8]}", user_id=user, chat_id="c1", turn_id="t1",
        agent="noter", goal="note it", created_at=deps.clock.now(),
    )  # fmt: skip
    service = AgentJobService(deps, catalog=NoteCatalog(tool), sleep=lambda _: None)
    running = Background(lambda: service.run(job, "msg-1"))
    assert gate.reached.wait(60)  # claimed, its document written, about to write a note

    assert AccountAdmin(deps).delete(user).deleted  # jobs are not waited for: they are fenced
    nothing_left(db, cache, user)
    gate.opened.set()
    outcome = running.join()
    assert tool.refused == ["account_erased"]  # the write was tried, and refused
    assert outcome is not None and outcome.status == "erased", running.error
    nothing_left(db, cache, user)
