"""Firestore writes committed in the order given, in as few batches as the limits allow.

A Commit takes at most 500 writes and a request of 10 MiB (the emulator: 4 MiB), so a new
batch starts before either would be passed: 500 writes, or ``MAX_BATCH_BYTES`` by a rough
size estimate. Batches commit in order, so what is added last lands last: a reader never
sees a document before the ones added ahead of it. Only each batch is atomic.
"""

from __future__ import annotations

from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.document import DocumentReference
from google.cloud.firestore_v1.field_path import FieldPath

MAX_BATCH_WRITES = 500
MAX_BATCH_BYTES = 3 * 1024 * 1024


class Batches:
    def __init__(self, client: firestore.Client) -> None:
        self._client = client
        self._batch = client.batch()
        self._writes = 0
        self._bytes = 0

    def set(
        self,
        ref: DocumentReference,
        data: dict[str, Any],
        merge: list[str | FieldPath] | None = None,
    ) -> None:
        """``set`` of the whole document, or (``merge``) of only these fields."""
        size = estimated_size(data)
        self._make_room(size)
        if merge is None:
            self._batch.set(ref, data)
        else:
            self._batch.set(ref, data, merge=merge)
        self._writes += 1
        self._bytes += size

    def delete(self, ref: DocumentReference) -> None:
        self._make_room(0)
        self._batch.delete(ref)
        self._writes += 1

    def flush(self) -> None:
        """Commit what is pending (no RPC when nothing is)."""
        if self._writes:
            self._batch.commit()
        self._batch = self._client.batch()
        self._writes = self._bytes = 0

    def _make_room(self, size: int) -> None:
        full = self._writes >= MAX_BATCH_WRITES or self._bytes + size > MAX_BATCH_BYTES
        if self._writes and full:
            self.flush()


def estimated_size(value: Any) -> int:
    """Roughly the bytes a value adds to a request: enough to stay under the limit."""
    if isinstance(value, bytes | str):
        return len(value) + 1
    if isinstance(value, dict):
        return sum(len(str(k)) + 1 + estimated_size(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return sum(estimated_size(v) for v in value)
    return 16
