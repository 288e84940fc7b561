"""The user's whole Firestore tree (``users/{uid}`` and below): export it, or erase it.

Everything the product keeps per user lives under ``users/{uid}`` (chats, messages, turns,
and whatever later collections join them), so both operations walk that one document's
subcollections with recursive queries. A recursive query is bounded by its collection's
path (``users/u1/chats`` ... ``users/u1/chats\\0``), never by a string prefix of the uid:
erasing ``u1`` cannot touch ``u1_2``.

The turn graph's checkpoint threads live outside that tree (``checkpoint_threads/{id}``,
keyed by thread); erasure first deletes those the user's turn and control records name.

Erasure deletes in batches of at most 500 writes, then checks that nothing is left and
raises ``DependencyUnavailable`` otherwise; deleting what is already gone is a no-op, so a
retry after any failure completes the erasure. Around it, the erasure's mark
(``firestore_erasure``) refuses new turns and stops agent jobs from writing, and
``running_turns`` tells the erasure which turns it must wait for.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_document import DocumentSnapshot
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.collection import CollectionReference
from google.cloud.firestore_v1.document import DocumentReference
from google.cloud.firestore_v1.field_path import FieldPath

from shared.adapters.doc_ids import doc_id
from shared.adapters.firestore_chat_codec import plain
from shared.adapters.firestore_checkpoints import THREADS
from shared.adapters.firestore_erasure import mark
from shared.adapters.gcp_errors import transient_as_unavailable
from shared.errors import DependencyUnavailable
from shared.models.memory_api import ChatExport, ConversationExport, MessageExport, StoredDocument

Snapshot = DocumentSnapshot[DocumentReference]
BATCH_LIMIT = 500  # writes per Firestore commit


class FirestoreAccountStore:
    def __init__(self, client: firestore.Client, batch_size: int = BATCH_LIMIT) -> None:
        self._client = client
        self._batch_size = min(batch_size, BATCH_LIMIT)

    def _user(self, user_id: str) -> DocumentReference:
        ref: DocumentReference = self._client.collection("users").document(doc_id(user_id))
        return ref

    def delete_user(self, user_id: str) -> int:
        user = self._user(user_id)
        deleted = 0
        with transient_as_unavailable("firestore"):
            for thread_id in self._thread_ids(user):  # first: the turns name them
                thread = self._client.collection(THREADS).document(doc_id(thread_id))
                for collection in thread.collections():
                    deleted += self._delete_below(collection)
            for collection in user.collections():
                deleted += self._delete_below(collection)
            user.delete()
            left = [collection.id for collection in user.collections()]
        if left:
            raise DependencyUnavailable(f"firestore: documents left in {left}; retry")
        return deleted

    def begin_erasure(self, user_id: str, now: datetime) -> None:
        mark(self._client, user_id, now, running=True)

    def end_erasure(self, user_id: str, now: datetime) -> None:
        mark(self._client, user_id, now, running=False)

    def running_turns(self, user_id: str, now: datetime) -> int:
        turns = self._user(user_id).collection("turns")
        query = turns.where(filter=FieldFilter("status", "==", "running"))
        with transient_as_unavailable("firestore"):
            leases = [plain((s.to_dict() or {}).get("lease_expires_at")) for s in query.stream()]
        return sum(1 for lease in leases if lease is not None and lease > now)

    def _thread_ids(self, user: DocumentReference) -> set[str]:
        """The turn graph's threads of the user: named by its turn records and its chats'
        control records (checkpoints expire before the turn records that name them)."""
        found: set[str] = set()
        turns = user.collection("turns").select(["metadata.thread_id"])
        for snap in turns.stream():
            found.add(str(((snap.to_dict() or {}).get("metadata") or {}).get("thread_id") or ""))
        for snap in user.collection("chats").select(["control.thread_id"]).stream():
            found.add(str(((snap.to_dict() or {}).get("control") or {}).get("thread_id") or ""))
        return found - {""}

    def _delete_below(self, collection: CollectionReference) -> int:
        """Every document of the collection and of all its descendants, page by page."""
        page = collection.recursive().select([FieldPath.document_id()]).limit(self._batch_size)
        deleted = 0
        while True:
            refs = [snap.reference for snap in page.stream()]
            if not refs:
                return deleted
            batch = self._client.batch()
            for ref in refs:
                batch.delete(ref)
            batch.commit()
            deleted += len(refs)

    def export_user(self, user_id: str) -> ConversationExport:
        user = self._user(user_id)
        with transient_as_unavailable("firestore"):
            settings = user.get().to_dict() or {}
            snaps = list(self._all_below(user))
        chats: dict[str, dict[str, Any]] = {}
        messages: dict[str, list[MessageExport]] = {}
        documents: list[StoredDocument] = []
        for snap in snaps:
            parts = snap.reference.path.split("/")[2:]  # relative to users/{uid}
            data = snap.to_dict() or {}
            if len(parts) == 2 and parts[0] == "chats":
                chats[parts[1]] = data
            elif len(parts) == 4 and parts[0] == "chats" and parts[2] == "messages":
                messages.setdefault(parts[1], []).append(_message(parts[3], data))
            else:
                documents.append(StoredDocument(path="/".join(parts), data=json_safe(data)))
        return ConversationExport(
            settings=json_safe(settings),
            chats=[
                _chat(chat_id, chats.get(chat_id, {}), messages.get(chat_id, []))
                for chat_id in sorted(chats.keys() | messages.keys())
            ],
            documents=sorted(documents, key=lambda d: d.path),
        )

    @staticmethod
    def _all_below(user: DocumentReference) -> Iterator[Snapshot]:
        for collection in user.collections():
            yield from collection.recursive().stream()


def _message(message_id: str, data: dict[str, Any]) -> MessageExport:
    return MessageExport(
        id=message_id,
        role=str(data.get("role", "")),
        text=str(data.get("text", "")),
        created_at=data.get("created_at"),
        turn_id=data.get("turn_id"),
        kind=data.get("kind") or "text",
        question_id=data.get("question_id"),
    )


def _chat(chat_id: str, data: dict[str, Any], messages: list[MessageExport]) -> ChatExport:
    epoch = datetime.min.isoformat()
    return ChatExport(
        id=chat_id,
        created_at=data.get("created_at"),
        updated_at=data.get("updated_at"),
        summary=str(data.get("summary", "")),
        messages=sorted(
            messages, key=lambda m: (m.created_at.isoformat() if m.created_at else epoch, m.id)
        ),
    )


def json_safe(value: Any) -> Any:
    """Firestore values as JSON: timestamps ISO 8601, bytes base64, references their path."""
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return _scalar(value)


def _scalar(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, DocumentReference):
        return value.path
    if isinstance(value, firestore.GeoPoint):
        return {"latitude": value.latitude, "longitude": value.longitude}
    return str(value)
