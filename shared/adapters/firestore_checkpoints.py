"""LangGraph's ``BaseCheckpointSaver`` on Firestore (the sync client, injected).

Layout, one document path per thread (never a prefix scan over thread ids: deleting thread
``u1`` cannot touch ``u1_2``)::

    checkpoint_threads/{thread_id}/checkpoints/{checkpoint_id}.{digest(ns)}
        ns, checkpoint_id, parent_id, run_id, checkpoint, metadata, values (list),
        writes (map: the pending writes filed against it), expire_at
    checkpoint_threads/{thread_id}/checkpoint_chunks/{checkpoint key}.{v|w}.{digest}.{i}
        data (<= 256 KiB of a value too large to keep inline), expire_at

The thread document itself is never written. Encoding and size budgets:
``firestore_checkpoint_codec``; every document stays far below Firestore's 1 MiB. Thread
ids must be valid document ids (``doc_ids.doc_id``: no ``/``), else ``ValueError``.

TTL: every document carries ``expire_at`` (now + ``ttl``, default 30 days), rewritten by each
put, so a Firestore TTL policy on the ``checkpoints`` and ``checkpoint_chunks`` collection
groups removes what a finished thread left behind (terraform/data.tf).

RPCs (chunks only exist for values over the inline budgets, so usually none):

- ``get_tuple`` with a ``checkpoint_id``: one BatchGetDocuments; without one: one RunQuery
  (the newest of the namespace, ``ns ==`` ordered by ``checkpoint_id``: the composite
  index of terraform/data.tf). Either returns the writes too; one more BatchGet for chunks.
- ``put``: one Commit (the checkpoint and its chunks in one batch; past 500 writes or
  3 MiB, ``firestore_batches``, the chunks go first in more commits and the checkpoint
  last, so it is never visible before its chunks). It stores every channel value, not
  only ``new_versions``: each document is whole, so reading never follows older ones.
- ``put_writes``: one Commit (a field-level merge into the checkpoint document, and any
  chunks). Merging keeps concurrent writers apart: parallel tasks, or ``put`` and
  ``put_writes`` racing at exit under ``durability="exit"``. Writing the same
  ``(task_id, idx)`` again replaces it (same count; the other savers keep the first).
- ``list``: one streamed RunQuery, metadata ``filter`` applied here; needs a thread id (a
  list over every thread would scan every user's checkpoints).
- ``delete_thread``: two key-only RunQueries and one Commit per 500 deletes; ``prune``
  reads the thread's checkpoints with one RunQuery, ``copy_thread`` them and their chunks
  with two; ``delete_for_runs`` runs one collection-group RunQuery per 30 run ids (a
  collection-group index on ``run_id``, terraform/data.tf).

Channel versions are integers (``get_next_version``, as the base class): no stored data is
keyed by a version, so two forks reaching the same number cannot collide.

The product runs the graph synchronously (Flask on Cloud Functions): the async methods run
the sync ones in a worker thread (``checkpoint_threads.ThreadedAsyncSaver``).
"""

from __future__ import annotations

import builtins
from collections import defaultdict
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.collection import CollectionReference
from google.cloud.firestore_v1.document import DocumentReference
from google.cloud.firestore_v1.field_path import FieldPath
from google.cloud.firestore_v1.query import Query
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from shared.adapters import firestore_checkpoint_codec as codec
from shared.adapters.checkpoint_threads import ThreadedAsyncSaver
from shared.adapters.clock import SystemClock
from shared.adapters.doc_ids import doc_id
from shared.adapters.firestore_batches import Batches
from shared.adapters.gcp_errors import transient_as_unavailable
from shared.ports import Clock

THREADS = "checkpoint_threads"
CHECKPOINTS = "checkpoints"
CHUNKS = "checkpoint_chunks"
DEFAULT_TTL = timedelta(days=30)
RUN_IDS_PER_QUERY = 30  # Firestore's limit for an "in" filter


class FirestoreSaver(ThreadedAsyncSaver[int]):
    """Checkpoints of LangGraph threads in Firestore; construction does no I/O.

    ``serde`` is LangGraph's serializer protocol (default ``JsonPlusSerializer``); an
    encrypting one (``EncryptedSerializer``) encrypts every payload: checkpoint, metadata,
    values and writes (ids, channel names, task paths and ``run_id`` stay plain). No
    ``setup()``: Firestore needs no schema; the TTL policy and indexes are terraform's.
    """

    def __init__(
        self,
        client: firestore.Client,
        *,
        ttl: timedelta = DEFAULT_TTL,
        serde: SerializerProtocol | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(serde=serde)
        self._client = client
        self._ttl = ttl
        self._clock = clock or SystemClock()

    # -- references ------------------------------------------------------------------------
    def _thread(self, thread_id: str) -> DocumentReference:
        ref: DocumentReference = self._client.collection(THREADS).document(doc_id(thread_id))
        return ref

    def _checkpoints(self, thread_id: str) -> CollectionReference:
        collection: CollectionReference = self._thread(thread_id).collection(CHECKPOINTS)
        return collection

    def _chunks(self, thread_id: str) -> CollectionReference:
        collection: CollectionReference = self._thread(thread_id).collection(CHUNKS)
        return collection

    def _expire_at(self) -> datetime:
        return self._clock.now() + self._ttl

    # -- reads -----------------------------------------------------------------------------
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        conf = config["configurable"]
        thread_id, ns = conf["thread_id"], conf.get("checkpoint_ns", "")
        with transient_as_unavailable("firestore"):
            if checkpoint_id := get_checkpoint_id(config):
                key = codec.checkpoint_key(ns, checkpoint_id)
                snap = self._checkpoints(thread_id).document(key).get()
                data = snap.to_dict() if snap.exists else None
            else:
                query = (
                    self._checkpoints(thread_id)
                    .where(filter=FieldFilter("ns", "==", ns))
                    .order_by("checkpoint_id", direction=Query.DESCENDING)
                    .limit(1)
                )
                data = next(iter([snap.to_dict() for snap in query.stream()]), None)
            if not data or "checkpoint" not in data:  # none, or writes whose put is pending
                return None
            return self._tuple(thread_id, data)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Newest first; ``checkpoint_ns`` absent from ``config`` lists every namespace."""
        conf = config["configurable"] if config else {}
        if "thread_id" not in conf:
            raise ValueError("FirestoreSaver.list needs a thread_id: no scan over all threads")
        thread_id, ns = conf["thread_id"], conf.get("checkpoint_ns")
        query: Query | CollectionReference = self._checkpoints(thread_id)
        if ns is not None:
            query = query.where(filter=FieldFilter("ns", "==", ns))
        if checkpoint_id := conf.get("checkpoint_id"):
            query = query.where(filter=FieldFilter("checkpoint_id", "==", checkpoint_id))
        else:
            if before and (before_id := get_checkpoint_id(before)):
                query = query.where(filter=FieldFilter("checkpoint_id", "<", before_id))
            query = query.order_by("checkpoint_id", direction=Query.DESCENDING)
        if limit is not None and limit <= 0:
            return
        if limit is not None and not filter:
            query = query.limit(limit)
        yield from self._listed(thread_id, query, filter or {}, limit)

    def _listed(
        self, thread_id: str, query: Query, wanted: dict[str, Any], limit: int | None
    ) -> Iterator[CheckpointTuple]:
        left = limit
        with transient_as_unavailable("firestore"):
            for snap in query.stream():
                if left is not None and left <= 0:
                    return
                data = snap.to_dict() or {}
                if "checkpoint" not in data:  # writes whose put is pending
                    continue
                metadata = codec.metadata_of(self.serde, data)
                if any(metadata.get(k) != v for k, v in wanted.items()):
                    continue
                if left is not None:
                    left -= 1
                yield self._tuple(thread_id, data)

    def _tuple(self, thread_id: str, data: dict[str, Any]) -> CheckpointTuple:
        """The tuple of a checkpoint document, fetching its chunks (one get_all) if any."""
        chunks: dict[str, bytes] = {}
        if ids := codec.referenced_chunks(data):
            refs = [self._chunks(thread_id).document(i) for i in ids]
            for snap in self._client.get_all(refs):
                if snap.exists:
                    chunks[snap.id] = snap.get("data")
        return codec.to_tuple(self.serde, thread_id, data, chunks)

    # -- writes ----------------------------------------------------------------------------
    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        conf = config["configurable"]
        thread_id, ns = conf["thread_id"], conf.get("checkpoint_ns", "")
        fields, chunks = codec.checkpoint_doc(
            self.serde,
            checkpoint,
            get_serializable_checkpoint_metadata(config, metadata),
            ns,
            conf.get("checkpoint_id"),
        )
        fields["expire_at"] = self._expire_at()
        ref = self._checkpoints(thread_id).document(codec.checkpoint_key(ns, checkpoint["id"]))
        with transient_as_unavailable("firestore"):
            batches = Batches(self._client)
            self._add_chunks(batches, thread_id, chunks, fields["expire_at"])
            # Only these fields: the writes a concurrent put_writes merged in stay.
            batches.set(ref, fields, merge=builtins.list(fields))
            batches.flush()
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint["id"],
            }
        }

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        if not writes:
            return
        conf = config["configurable"]
        thread_id, ns = conf["thread_id"], conf.get("checkpoint_ns", "")
        key = codec.checkpoint_key(ns, conf["checkpoint_id"])
        entries, chunks = codec.writes_entries(self.serde, key, writes, task_id, task_path)
        expire_at = self._expire_at()
        merge: builtins.list[str | FieldPath] = [FieldPath("writes", name) for name in entries]
        with transient_as_unavailable("firestore"):
            batches = Batches(self._client)
            self._add_chunks(batches, thread_id, chunks, expire_at)
            batches.set(
                self._checkpoints(thread_id).document(key),
                {"writes": entries, "expire_at": expire_at},
                merge=[*merge, "expire_at"],
            )
            batches.flush()

    def _add_chunks(
        self,
        batches: Batches,
        thread_id: str,
        chunks: Sequence[codec.Chunk],
        expire_at: datetime,
    ) -> None:
        for chunk_id, data in chunks:
            ref = self._chunks(thread_id).document(chunk_id)
            batches.set(ref, {"data": data, "expire_at": expire_at})

    # -- maintenance -----------------------------------------------------------------------
    def delete_thread(self, thread_id: str) -> None:
        with transient_as_unavailable("firestore"):
            batches = Batches(self._client)
            for collection in (self._checkpoints(thread_id), self._chunks(thread_id)):
                keys = collection.select([FieldPath.document_id()])
                for snap in keys.stream():
                    batches.delete(snap.reference)
            batches.flush()

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Checkpoints whose metadata names one of ``run_ids``, with their writes and chunks."""
        with transient_as_unavailable("firestore"):
            batches = Batches(self._client)
            for start in range(0, len(run_ids), RUN_IDS_PER_QUERY):
                some = builtins.list(run_ids[start : start + RUN_IDS_PER_QUERY])
                group = self._client.collection_group(CHECKPOINTS)
                for snap in group.where(filter=FieldFilter("run_id", "in", some)).stream():
                    thread = snap.reference.parent.parent
                    root = thread.parent if thread else None
                    if root is None or root.id != THREADS or root.parent is not None:
                        continue  # a "checkpoints" collection that is not ours
                    self._delete_checkpoint(batches, thread.id, snap.reference, snap.to_dict())
            batches.flush()

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Every checkpoint, write and chunk, with a fresh ``expire_at``; chunks first."""
        expire_at = self._expire_at()
        with transient_as_unavailable("firestore"):
            batches = Batches(self._client)
            for name in (CHUNKS, CHECKPOINTS):
                target = self._thread(target_thread_id).collection(name)
                for snap in self._thread(source_thread_id).collection(name).stream():
                    data = {**(snap.to_dict() or {}), "expire_at": expire_at}
                    batches.set(target.document(snap.id), data)
            batches.flush()

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``"delete"``: the threads; ``"keep_latest"``: all but the newest per namespace.

        A namespace whose newest checkpoint counts DeltaChannel updates since the last
        snapshot (``counters_since_delta_snapshot``) is left whole: its older checkpoints
        and writes are still needed to rebuild that channel (the product has none).
        """
        if strategy not in ("delete", "keep_latest"):
            raise ValueError(f"unknown prune strategy {strategy!r}")
        for thread_id in thread_ids:
            if strategy == "delete":
                self.delete_thread(thread_id)
            else:
                self._keep_latest(thread_id)

    def _keep_latest(self, thread_id: str) -> None:
        with transient_as_unavailable("firestore"):
            by_ns: defaultdict[str, builtins.list[Any]] = defaultdict(builtins.list)
            for snap in self._checkpoints(thread_id).stream():
                data = snap.to_dict() or {}
                if "checkpoint_id" in data:  # not writes waiting for their put
                    by_ns[data["ns"]].append((data["checkpoint_id"], snap.reference, data))
            batches = Batches(self._client)
            for found in by_ns.values():
                found.sort(key=lambda item: item[0])
                newest = codec.metadata_of(self.serde, found[-1][2])
                if newest.get("counters_since_delta_snapshot"):
                    continue
                for _, ref, data in found[:-1]:
                    self._delete_checkpoint(batches, thread_id, ref, data)
            batches.flush()

    def _delete_checkpoint(
        self,
        batches: Batches,
        thread_id: str,
        ref: DocumentReference,
        data: dict[str, Any] | None,
    ) -> None:
        for chunk_id in codec.referenced_chunks(data or {}):
            batches.delete(self._chunks(thread_id).document(chunk_id))
        batches.delete(ref)

    def get_next_version(self, current: int | None, channel: None) -> int:
        """The next integer; a string version of LangGraph's SQL savers (``"{n}.{random}"``)
        continues from its number."""
        if current is None:
            return 1
        if isinstance(current, str):
            return int(current.split(".")[0]) + 1
        return int(current) + 1
