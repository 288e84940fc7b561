"""LangGraph checkpoints as Firestore documents, and back (no I/O; ``firestore_checkpoints``).

A checkpoint document is self-contained: the checkpoint (without its channel values), its
metadata, every channel value and the pending writes filed against it. Each serialized
payload is the serializer's ``dumps_typed`` pair, kept as ``{"t": type, "b": bytes}``
(Firestore bytes, no base64). Payloads that do not fit the document's budget move to chunk
documents of at most ``CHUNK_BYTES`` and the payload keeps ``{"t", "chunks", "n"}``: the
chunks' id prefix and count, so a reader fetches them all with one ``get_all``.

Budgets: the smallest channel values stay inline up to ``VALUES_INLINE_BYTES`` per
checkpoint, the smallest writes of one ``put_writes`` call up to ``WRITES_INLINE_BYTES``;
the rest is chunked. A document thus holds at most 128 KiB of values plus 16 KiB per task
that wrote to it (the Firestore limit is 1 MiB).

Field names never come from the graph (Firestore refuses names like ``__start__``): values
are a list of ``{"ch": channel, ...payload}``, writes a map keyed ``"{idx}:{task_id}"``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    PendingWrite,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from shared.adapters.doc_ids import doc_id

CHUNK_BYTES = 256 * 1024
VALUES_INLINE_BYTES = 128 * 1024
WRITES_INLINE_BYTES = 16 * 1024

Payload = dict[str, Any]
Chunk = tuple[str, bytes]  # (chunk document id, bytes)


class MissingChunk(LookupError):
    """A checkpoint names a chunk document that is not there (deleted under it)."""


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def checkpoint_key(ns: str, checkpoint_id: str) -> str:
    """The document id of a checkpoint: its id and a digest of its namespace."""
    return doc_id(f"{checkpoint_id}.{_digest(ns)}")


def pack(
    items: Mapping[str, tuple[str, bytes]], budget: int, prefix: Callable[[str], str]
) -> tuple[dict[str, Payload], list[Chunk]]:
    """Payload per item, smallest inline while they fit ``budget``; the rest chunked."""
    payloads: dict[str, Payload] = {}
    chunks: list[Chunk] = []
    used = 0
    for name, (type_, data) in sorted(items.items(), key=lambda item: len(item[1][1])):
        if used + len(data) <= budget:
            used += len(data)
            payloads[name] = {"t": type_, "b": data}
            continue
        base = doc_id(prefix(name))
        parts = [data[i : i + CHUNK_BYTES] for i in range(0, len(data), CHUNK_BYTES)]
        chunks += [(f"{base}.{i}", part) for i, part in enumerate(parts)]
        payloads[name] = {"t": type_, "chunks": base, "n": len(parts)}
    return payloads, chunks


def chunk_ids(payload: Payload) -> list[str]:
    if "chunks" not in payload:
        return []
    return [f"{payload['chunks']}.{i}" for i in range(payload["n"])]


def unpack(payload: Payload, chunks: Mapping[str, bytes]) -> tuple[str, bytes]:
    if "b" in payload:
        return payload["t"], bytes(payload["b"])
    ids = chunk_ids(payload)
    if missing := [i for i in ids if i not in chunks]:
        raise MissingChunk(f"checkpoint chunks missing: {missing}")
    return payload["t"], b"".join(chunks[i] for i in ids)


def checkpoint_doc(
    serde: SerializerProtocol,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    ns: str,
    parent_id: str | None,
) -> tuple[dict[str, Any], list[Chunk]]:
    """The document's fields (all but ``writes`` and ``expire_at``) and its chunks."""
    key = checkpoint_key(ns, checkpoint["id"])
    body: dict[str, Any] = dict(checkpoint)
    values: dict[str, Any] = body.pop("channel_values")
    payloads, chunks = pack(
        {ch: serde.dumps_typed(value) for ch, value in values.items()},
        VALUES_INLINE_BYTES,
        lambda ch: f"{key}.v.{_digest(ch)}",
    )
    run_id = metadata.get("run_id")
    fields = {
        "ns": ns,
        "checkpoint_id": checkpoint["id"],
        "parent_id": parent_id,
        "run_id": run_id if isinstance(run_id, str) else None,
        "checkpoint": _typed(serde, body),
        "metadata": _typed(serde, metadata),
        "values": [{"ch": ch, **payload} for ch, payload in payloads.items()],
    }
    return fields, chunks


def writes_entries(
    serde: SerializerProtocol,
    key: str,
    writes: Sequence[tuple[str, Any]],
    task_id: str,
    task_path: str,
) -> tuple[dict[str, Payload], list[Chunk]]:
    """Map entries (``"{idx}:{task_id}"``) of one task's writes, and their chunks.

    Special channels (error, interrupt, ...) take their fixed negative index, as in every
    LangGraph saver, so writing them again replaces them.
    """
    meta: dict[str, Payload] = {}
    items: dict[str, tuple[str, bytes]] = {}
    for position, (channel, value) in enumerate(writes):
        idx = WRITES_IDX_MAP.get(channel, position)
        name = f"{idx}:{task_id}"
        meta[name] = {"task": task_id, "idx": idx, "ch": channel, "path": task_path}
        items[name] = serde.dumps_typed(value)
    payloads, chunks = pack(items, WRITES_INLINE_BYTES, lambda name: f"{key}.w.{_digest(name)}")
    return {name: {**meta[name], **payloads[name]} for name in meta}, chunks


def referenced_chunks(data: Mapping[str, Any]) -> list[str]:
    """Every chunk document id a checkpoint document names."""
    payloads: Iterable[Payload] = [*data.get("values", []), *data.get("writes", {}).values()]
    return [chunk for payload in payloads for chunk in chunk_ids(payload)]


def to_tuple(
    serde: SerializerProtocol,
    thread_id: str,
    data: Mapping[str, Any],
    chunks: Mapping[str, bytes],
) -> CheckpointTuple:
    ns, checkpoint_id, parent_id = data["ns"], data["checkpoint_id"], data.get("parent_id")
    checkpoint: Checkpoint = serde.loads_typed(unpack(data["checkpoint"], chunks))
    checkpoint["channel_values"] = {
        value["ch"]: serde.loads_typed(unpack(value, chunks)) for value in data.get("values", [])
    }
    writes = sorted(
        data.get("writes", {}).values(),
        key=lambda w: writes_sort_key(w["path"], w["task"], w["idx"]),
    )
    pending: list[PendingWrite] = [
        (w["task"], w["ch"], serde.loads_typed(unpack(w, chunks))) for w in writes
    ]
    return CheckpointTuple(
        config=_config(thread_id, ns, checkpoint_id),
        checkpoint=checkpoint,
        metadata=metadata_of(serde, data),
        parent_config=_config(thread_id, ns, parent_id) if parent_id else None,
        pending_writes=pending,
    )


def metadata_of(serde: SerializerProtocol, data: Mapping[str, Any]) -> CheckpointMetadata:
    metadata: CheckpointMetadata = serde.loads_typed(unpack(data["metadata"], {}))
    return metadata


def _typed(serde: SerializerProtocol, value: Any) -> Payload:
    type_, data = serde.dumps_typed(value)
    return {"t": type_, "b": data}


def _config(thread_id: str, ns: str, checkpoint_id: str) -> RunnableConfig:
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint_id,
        }
    }
