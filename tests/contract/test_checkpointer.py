"""The checkpointer beyond LangGraph's conformance suite: thread isolation, multi-MB state,
and a graph interrupted by one process and resumed by another; each on LangGraph's
``InMemorySaver`` and on ``FirestoreSaver`` (emulator). Below, Firestore only: what the raw
documents hold (bytes, ``expire_at``, sizes) and the RPCs each call costs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypedDict

import pytest
from google.cloud import firestore
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    Checkpoint,
    CheckpointMetadata,
    empty_checkpoint,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from shared.adapters.firestore_checkpoints import CHECKPOINTS, CHUNKS, THREADS, FirestoreSaver
from shared.config import Settings
from shared.fakes.clock import FixedClock
from testkit.probes import Probe, count_firestore
from tests.contract.conftest import BACKENDS, unique

MiB = 1024 * 1024


@dataclass
class SaverBackend:
    saver: BaseCheckpointSaver[Any]
    # Another process's saver over the same storage (the in-memory one can only share).
    another: Callable[[], BaseCheckpointSaver[Any]]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> SaverBackend:
    if request.param == "fake":
        saver = InMemorySaver()
        return SaverBackend(saver, lambda: saver)
    request.getfixturevalue("stack_env")
    client: firestore.Client = request.getfixturevalue("firestore_client")
    return SaverBackend(FirestoreSaver(client), lambda: FirestoreSaver(client))


def config(thread_id: str, checkpoint_id: str | None = None) -> RunnableConfig:
    conf: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ""}
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


def put(
    saver: BaseCheckpointSaver[Any],
    thread_id: str,
    values: dict[str, Any] | None = None,
    parent: RunnableConfig | None = None,
) -> RunnableConfig:
    checkpoint: Checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = values or {}
    versions = {
        channel: saver.get_next_version(None, None) for channel in checkpoint["channel_values"]
    }
    checkpoint["channel_versions"] = versions
    parent_id = parent["configurable"]["checkpoint_id"] if parent else None
    return saver.put(
        config(thread_id, parent_id), checkpoint, {"source": "loop", "step": 0}, versions
    )


# -- both backends ---------------------------------------------------------------------------
def test_a_thread_id_is_not_a_prefix(backend: SaverBackend) -> None:
    saver, u1 = backend.saver, unique("u1")
    u1_2 = f"{u1}_2"
    stored = put(saver, u1, {"who": "u1"})
    saver.put_writes(stored, [("who", "u1 write")], "task-1")
    put(saver, u1_2, {"who": "u1_2"})

    assert [t.checkpoint["channel_values"] for t in saver.list(config(u1))] == [{"who": "u1"}]
    saver.delete_thread(u1)

    assert saver.get_tuple(config(u1)) is None and list(saver.list(config(u1))) == []
    kept = saver.get_tuple(config(u1_2))
    assert kept is not None and kept.checkpoint["channel_values"] == {"who": "u1_2"}
    assert len(list(saver.list(config(u1_2)))) == 1


def test_multi_megabyte_state_round_trips(backend: SaverBackend) -> None:
    saver, thread = backend.saver, unique("big")
    blob, text = os.urandom(3 * MiB), "x" * (MiB + 12345)
    stored = put(saver, thread, {"blob": blob, "text": text, "small": 1})
    saver.put_writes(stored, [("blob", os.urandom(600_000)), ("small", 2)], "task-1")

    got = backend.another().get_tuple(config(thread))

    assert got is not None
    assert got.checkpoint["channel_values"] == {"blob": blob, "text": text, "small": 1}
    assert got.pending_writes is not None
    assert [(w[1], len(w[2]) if w[1] == "blob" else w[2]) for w in got.pending_writes] == [
        ("blob", 600_000),
        ("small", 2),
    ]


def test_writes_that_arrive_before_their_checkpoint_wait_for_it(backend: SaverBackend) -> None:
    """At exit, ``durability="exit"`` saves the checkpoint and its writes concurrently."""
    saver, thread = backend.saver, unique("race")
    checkpoint = empty_checkpoint()
    early = config(thread, checkpoint["id"])
    saver.put_writes(early, [("answer", "yes")], "task-1")
    assert saver.get_tuple(early) is None

    saver.put(config(thread), checkpoint, {"source": "loop", "step": 1}, {})

    got = saver.get_tuple(config(thread))
    assert got is not None and got.checkpoint["id"] == checkpoint["id"]
    assert got.pending_writes == [("task-1", "answer", "yes")]


class AskState(TypedDict, total=False):
    question: str
    answer: str
    done: bool


def _ask(state: AskState) -> AskState:
    return {"answer": interrupt({"question": state["question"]})}


def _finish(state: AskState) -> AskState:
    return {"done": True}


def build_graph(saver: BaseCheckpointSaver[Any]) -> Any:
    graph = StateGraph(AskState)
    graph.add_node("ask", _ask)
    graph.add_node("finish", _finish)
    graph.add_edge(START, "ask")
    graph.add_edge("ask", "finish")
    graph.add_edge("finish", END)
    return graph.compile(checkpointer=saver)


def test_one_process_interrupts_and_another_resumes(backend: SaverBackend) -> None:
    run: RunnableConfig = {"configurable": {"thread_id": unique("graph")}}

    asked = build_graph(backend.saver).invoke({"question": "tea?"}, run, durability="exit")
    assert asked["__interrupt__"][0].value == {"question": "tea?"}

    resumed = build_graph(backend.another()).invoke(Command(resume="yes"), run, durability="exit")
    assert resumed == {"question": "tea?", "answer": "yes", "done": True}


# -- Firestore: the raw documents and the RPCs -------------------------------------------------
@pytest.fixture
def client(stack_env: None, settings: Settings) -> Iterator[firestore.Client]:
    """A client of this test's own, so counting its RPCs counts nobody else's."""
    own = firestore.Client(project=settings.gcp_project)
    yield own
    own.close()  # type: ignore[no-untyped-call]


def thread_docs(client: firestore.Client, thread_id: str) -> dict[str, list[dict[str, Any]]]:
    thread = client.collection(THREADS).document(thread_id)
    return {
        name: [snap.to_dict() or {} for snap in thread.collection(name).stream()]
        for name in (CHECKPOINTS, CHUNKS)
    }


def stored_size(value: Any) -> int:
    """Firestore's storage size of a field value (its documented rules, names included)."""
    if isinstance(value, str):
        return len(value.encode()) + 1
    if isinstance(value, bytes):
        return len(value)
    if isinstance(value, dict):
        return sum(len(k.encode()) + 1 + stored_size(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(stored_size(v) for v in value)
    return 8


@pytest.mark.stack
def test_documents_hold_raw_bytes_and_expire(client: firestore.Client) -> None:
    clock = FixedClock(datetime.now(UTC).replace(microsecond=0))
    saver = FirestoreSaver(client, ttl=timedelta(days=2), clock=clock)
    thread = unique("raw")
    stored = put(saver, thread, {"note": "hi", "blob": os.urandom(MiB)})
    saver.put_writes(stored, [("note", "there")], "task-1")

    docs = thread_docs(client, thread)

    [doc] = docs[CHECKPOINTS]
    assert isinstance(doc["checkpoint"]["b"], bytes) and isinstance(doc["metadata"]["b"], bytes)
    [note] = [value for value in doc["values"] if value["ch"] == "note"]
    assert isinstance(note["b"], bytes)
    assert all(isinstance(w["b"], bytes) for w in doc["writes"].values())
    assert len(docs[CHUNKS]) == 4 and all(isinstance(c["data"], bytes) for c in docs[CHUNKS])
    for raw in (doc, *docs[CHUNKS]):
        assert raw["expire_at"] == clock.now() + timedelta(days=2)


@pytest.mark.stack
def test_no_document_comes_near_the_limit(client: firestore.Client) -> None:
    saver, thread = FirestoreSaver(client), unique("sizes")
    values = {f"ch{i}": os.urandom(100_000) for i in range(5)} | {"big": os.urandom(5 * MiB)}
    stored = put(saver, thread, values)
    saver.put_writes(stored, [(f"ch{i}", os.urandom(50_000)) for i in range(4)], "task-1")

    docs = thread_docs(client, thread)

    sizes = [stored_size(doc) for name in docs for doc in docs[name]]
    assert len(sizes) > 20 and max(sizes) < 300 * 1024
    assert saver.get_tuple(config(thread)) is not None


@pytest.mark.stack
def test_rpcs_per_call(client: firestore.Client) -> None:
    probe = Probe()
    count_firestore(client, probe)
    saver, thread = FirestoreSaver(client), unique("rpcs")

    def rpcs(call: Callable[[], object]) -> dict[str, int]:
        mark = probe.snapshot()
        call()
        counts, _ = probe.since(mark)
        return {key: n for key, n in counts.items() if key != "fs.docs"}

    stored: dict[str, RunnableConfig] = {}
    assert rpcs(lambda: stored.update(first=put(saver, thread, {"a": 1}))) == {"fs.commits": 1}
    writes = [("a", 2), ("b", 3)]
    assert rpcs(lambda: saver.put_writes(stored["first"], writes, "t")) == {"fs.commits": 1}
    assert rpcs(lambda: saver.get_tuple(stored["first"])) == {"fs.reads": 1}
    assert rpcs(lambda: saver.get_tuple(config(thread))) == {"fs.reads": 1}
    assert rpcs(lambda: list(saver.list(config(thread)))) == {"fs.reads": 1}
    # The graph with durability="exit": one query for the thread's newest checkpoint, and at
    # exit one commit for the checkpoint and one per task with writes pending (the interrupt).
    run: RunnableConfig = {"configurable": {"thread_id": unique("graph")}}
    graph = build_graph(saver)
    ask = rpcs(lambda: graph.invoke({"question": "tea?"}, run, durability="exit"))
    assert ask == {"fs.reads": 1, "fs.commits": 2}
    resume = rpcs(lambda: graph.invoke(Command(resume="y"), run, durability="exit"))
    assert resume == {"fs.reads": 1, "fs.commits": 1}


@pytest.mark.stack
def test_prune_keeps_the_history_a_delta_channel_needs(client: firestore.Client) -> None:
    saver, thread = FirestoreSaver(client), unique("prune")
    first = put(saver, thread, {"a": 1})
    checkpoint = empty_checkpoint()
    delta: CheckpointMetadata = {"source": "loop", "step": 1}
    delta["counters_since_delta_snapshot"] = {"log": (1, 1)}
    saver.put(config(thread, first["configurable"]["checkpoint_id"]), checkpoint, delta, {})

    saver.prune([thread])
    assert len(list(saver.list(config(thread)))) == 2

    put(saver, thread, {"a": 2}, parent=config(thread, checkpoint["id"]))
    saver.prune([thread])
    assert len(list(saver.list(config(thread)))) == 1


@pytest.mark.stack
def test_ids_that_are_not_document_ids_are_refused(client: firestore.Client) -> None:
    saver = FirestoreSaver(client)
    with pytest.raises(ValueError, match="not a valid document id"):
        saver.get_tuple(config("users/u1"))
    with pytest.raises(ValueError, match="needs a thread_id"):
        list(saver.list(None))


class XorCipher:
    """A stand-in cipher: the serde hook is what is tested, not the cryptography."""

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        return "xor", bytes(b ^ 0x5A for b in plaintext)

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        assert ciphername == "xor"
        return bytes(b ^ 0x5A for b in ciphertext)


@pytest.mark.stack
def test_an_encrypting_serializer_sees_every_payload(client: firestore.Client) -> None:
    saver = FirestoreSaver(client, serde=EncryptedSerializer(XorCipher()))
    thread, secret = unique("enc"), "my secret note"
    stored = put(saver, thread, {"note": secret, "big": secret * 30_000})
    saver.put_writes(stored, [("note", secret)], "task-1")

    docs = thread_docs(client, thread)

    raw = b"".join(
        [c["data"] for c in docs[CHUNKS]]
        + [
            v["b"]
            for doc in docs[CHECKPOINTS]
            for v in [*doc["values"], *doc["writes"].values()]
            if "b" in v
        ]
    )
    assert secret.encode() not in raw and len(docs[CHUNKS]) > 0
    got = saver.get_tuple(config(thread))
    assert got is not None and got.checkpoint["channel_values"]["note"] == secret
    assert got.pending_writes == [("task-1", "note", secret)]
