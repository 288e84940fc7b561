"""``ConversationStore`` on Firestore (the sync client, injected).

Layout, everything under the user so another user's chat is simply not found::

    users/{uid}/chats/{chat_id}                  created_at, updated_at, message_count,
                                                 summary, summarized_until,
                                                 pending (map: a PendingQuestion, absent if none)
    users/{uid}/chats/{chat_id}/messages/{id}    role, text, created_at, turn_id
    users/{uid}/turns/{client_message_id}        status (running|done|failed), chat_id, turn_id,
                                                 response (map), metadata (map, once done),
                                                 lease_expires_at, created_at, updated_at,
                                                 expire_at (TTL policy field)

``pending`` is stored as JSON-typed values except ``asked_at`` (a timestamp): ``resume_at``
comes back as the JSON form of what was written. Timestamps come back as UTC datetimes of
microsecond precision, whatever the zone they were written in.

RPCs: ``complete_turn`` makes exactly one, a Commit of one batch holding the messages, the
turn record and the chat's update or creation (no read). ``append_message`` commits one
batch; ``release_turn`` one update; ``claim_turn`` one transaction (BeginTransaction, one
read, Commit). ``get_chat`` and ``get_turn`` read one document; ``recent_messages`` runs one
query.

Indexes: ``recent_messages`` filters ``created_at > after`` and orders by ``created_at``
descending then by document id descending, which is Firestore's implicit order for that
query anyway. A range and an order on the same single field are served by the automatic
single-field (descending) index: no composite index is needed in production (the emulator
does not check indexes at all).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from google.api_core import exceptions as gexc
from google.cloud import firestore
from google.cloud.firestore_v1.base_document import DocumentSnapshot
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.document import DocumentReference
from google.cloud.firestore_v1.field_path import FieldPath
from pydantic import BaseModel

from shared.adapters.doc_ids import doc_id
from shared.adapters.gcp_errors import transient_as_unavailable
from shared.errors import Conflict, DependencyUnavailable, NotFound
from shared.models.domain import (
    Chat,
    ChatUpdate,
    Message,
    PendingQuestion,
    TurnClaim,
    TurnMetadata,
    TurnRecord,
)
from shared.models.wire import TurnResponse

Snapshot = DocumentSnapshot[DocumentReference]
DEFAULT_TURN_TTL = timedelta(days=7)
M = TypeVar("M", bound=BaseModel)


@contextmanager
def _firestore_errors() -> Iterator[None]:
    try:
        with transient_as_unavailable("firestore"):
            yield
    except ValueError as exc:
        # transactional() wraps the last Aborted of its retries in a ValueError.
        if isinstance(exc.__cause__, gexc.Aborted):
            raise DependencyUnavailable("firestore transaction kept aborting") from exc
        raise


class FirestoreConversationStore:
    def __init__(self, client: firestore.Client, turn_ttl: timedelta = DEFAULT_TURN_TTL) -> None:
        self._client = client
        self._turn_ttl = turn_ttl

    # -- references -------------------------------------------------------------------------
    def _user_doc(self, user_id: str, collection: str, document: str) -> DocumentReference:
        user = self._client.collection("users").document(doc_id(user_id))
        ref: DocumentReference = user.collection(collection).document(doc_id(document))
        return ref

    def _chat(self, user_id: str, chat_id: str) -> DocumentReference:
        return self._user_doc(user_id, "chats", chat_id)

    def _turn(self, user_id: str, client_message_id: str) -> DocumentReference:
        return self._user_doc(user_id, "turns", client_message_id)

    # -- chats and messages -----------------------------------------------------------------
    def get_chat(self, user_id: str, chat_id: str) -> Chat | None:
        with _firestore_errors():
            snap = self._chat(user_id, chat_id).get()
        return _chat_from(user_id, snap) if snap.exists else None

    def create_chat(self, user_id: str, chat_id: str, now: datetime) -> Chat:
        ref = self._chat(user_id, chat_id)
        data = {"created_at": now, "updated_at": now, "summary": "", "message_count": 0}
        with _firestore_errors():
            try:
                ref.create(data)
            except gexc.AlreadyExists:
                return _chat_from(user_id, ref.get())
        return Chat(id=chat_id, user_id=user_id, created_at=now, updated_at=now)

    def message_count(self, user_id: str, chat_id: str) -> int:
        """The chat's message counter (0 for a missing chat)."""
        with _firestore_errors():
            snap = self._chat(user_id, chat_id).get(field_paths=["message_count"])
        return int((snap.to_dict() or {}).get("message_count", 0))

    def recent_messages(
        self, user_id: str, chat_id: str, limit: int, after: datetime | None = None
    ) -> list[Message]:
        if limit <= 0:
            return []
        query = (
            self._chat(user_id, chat_id)
            .collection("messages")
            .order_by("created_at", direction=firestore.Query.DESCENDING)
            .order_by(FieldPath.document_id(), direction=firestore.Query.DESCENDING)
            .limit(limit)
        )
        if after is not None:  # same field as the order: the single-field index serves it
            query = query.where(filter=FieldFilter("created_at", ">", after))
        with _firestore_errors():
            newest_first = [_message_from(snap) for snap in query.stream()]
        return newest_first[::-1]

    def append_message(self, user_id: str, chat_id: str, message: Message) -> bool:
        chat = self._chat(user_id, chat_id)
        batch = self._client.batch()
        message_ref = chat.collection("messages").document(doc_id(message.id))
        batch.create(message_ref, _message_data(message))
        batch.update(
            chat, {"updated_at": message.created_at, "message_count": firestore.Increment(1)}
        )
        with _firestore_errors():
            try:
                batch.commit()
            except gexc.AlreadyExists:
                return False
            except gexc.NotFound as exc:
                raise NotFound("chat not found") from exc
        return True

    # -- turns ------------------------------------------------------------------------------
    def claim_turn(
        self,
        user_id: str,
        client_message_id: str,
        chat_id: str,
        turn_id: str,
        now: datetime,
        lease_seconds: int,
    ) -> TurnClaim:
        ref = self._turn(user_id, client_message_id)
        lease_until = now + timedelta(seconds=lease_seconds)

        @firestore.transactional
        def claim(transaction: firestore.Transaction) -> TurnClaim:
            snap = ref.get(transaction=transaction)
            data: dict[str, Any] = snap.to_dict() or {}
            if data.get("status") == "done":
                response = TurnResponse.model_validate(data["response"])
                return TurnClaim(
                    status="done",
                    turn_id=data["turn_id"],
                    chat_id=data["chat_id"],
                    response=response,
                )
            if data.get("status") == "running" and data["lease_expires_at"] > now:
                return TurnClaim(status="running", turn_id=data["turn_id"], chat_id=data["chat_id"])
            # New, or an abandoned/failed attempt: keep its chat, start a fresh turn id.
            claimed_chat = data.get("chat_id", chat_id)
            transaction.set(
                ref,
                {
                    "status": "running",
                    "chat_id": claimed_chat,
                    "turn_id": turn_id,
                    "response": None,
                    "lease_expires_at": lease_until,
                    "created_at": data.get("created_at", now),
                    "updated_at": now,
                    "expire_at": now + self._turn_ttl,
                },
            )
            return TurnClaim(status="new", turn_id=turn_id, chat_id=claimed_chat)

        with _firestore_errors():
            result: TurnClaim = claim(self._client.transaction())
        return result

    def complete_turn(
        self,
        user_id: str,
        client_message_id: str,
        messages: Sequence[Message],
        response: TurnResponse,
        now: datetime,
        new_chat: bool = False,
        metadata: TurnMetadata | None = None,
        chat_update: ChatUpdate | None = None,
    ) -> None:
        """One batch, one Commit: the messages (created, so a repeated completion writes
        nothing), the turn's response and metadata, and the chat's counters and
        ``chat_update``, creating the chat on its first turn. Raises ``Conflict`` for an
        unclaimed turn or a missing chat."""
        chat = self._chat(user_id, response.chat_id)
        batch = self._client.batch()
        for message in messages:
            batch.create(
                chat.collection("messages").document(doc_id(message.id)), _message_data(message)
            )
        batch.update(
            self._turn(user_id, client_message_id),
            {
                "status": "done",
                "turn_id": response.turn_id,
                "response": response.model_dump(mode="json"),
                "metadata": metadata.model_dump(mode="json") if metadata else None,
                "updated_at": now,
                "expire_at": now + self._turn_ttl,
            },
        )
        fields = {
            "updated_at": now,
            "message_count": firestore.Increment(len(messages)),
            **_chat_update_data(chat_update),
        }
        if new_chat:  # in the same commit: the first turn of a chat costs no extra write
            fields = {"created_at": now, "summary": "", **fields}
            # Listed fields replace their whole value (a map too), as update() does.
            batch.set(chat, fields, merge=list(fields))
        else:
            batch.update(chat, fields)
        with _firestore_errors():
            try:
                batch.commit()
            except gexc.AlreadyExists:
                return  # this turn's messages are already stored: an earlier call completed it
            except gexc.NotFound as exc:
                raise Conflict("turn not claimed or chat missing") from exc

    def get_turn(self, user_id: str, client_message_id: str) -> TurnRecord | None:
        with _firestore_errors():
            snap = self._turn(user_id, client_message_id).get()
        if not snap.exists:
            return None
        data = snap.to_dict() or {}
        return TurnRecord(
            status=data["status"],
            chat_id=data["chat_id"],
            turn_id=data["turn_id"],
            response=_model_or_none(TurnResponse, data.get("response")),
            metadata=_model_or_none(TurnMetadata, data.get("metadata")),
        )

    def release_turn(self, user_id: str, client_message_id: str) -> None:
        # Marked failed rather than deleted, so the retry keeps the turn's chat.
        with _firestore_errors():
            try:
                self._turn(user_id, client_message_id).update(
                    {"status": "failed", "lease_expires_at": None}
                )
            except gexc.NotFound:
                return


def _chat_update_data(update: ChatUpdate | None) -> dict[str, Any]:
    """The chat fields a turn's ``ChatUpdate`` writes; a new ``pending`` wins over a clear."""
    if update is None:
        return {}
    data: dict[str, Any] = {}
    if update.summary is not None:
        data["summary"] = update.summary
        data["summarized_until"] = update.summarized_until
    if update.pending is not None:
        data["pending"] = _pending_data(update.pending)
    elif update.clear_pending:
        data["pending"] = firestore.DELETE_FIELD
    return data


def _pending_data(pending: PendingQuestion) -> dict[str, Any]:
    return {**pending.model_dump(mode="json"), "asked_at": pending.asked_at}


def _model_or_none(model: type[M], data: Any) -> M | None:
    return None if data is None else model.model_validate(_plain(data))


def _plain(value: Any) -> Any:
    """Firestore's values as written: ``DatetimeWithNanoseconds`` becomes a UTC datetime."""
    if isinstance(value, datetime):  # a plain datetime (pydantic keeps the subclass)
        utc = value.astimezone(UTC) if value.tzinfo else value
        return datetime.combine(utc.date(), utc.time(), utc.tzinfo)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _message_data(message: Message) -> dict[str, Any]:
    return {
        "role": message.role,
        "text": message.text,
        "created_at": message.created_at,
        "turn_id": message.turn_id,
    }


def _message_from(snap: Snapshot) -> Message:
    data = snap.to_dict() or {}
    return Message(
        id=snap.id,
        role=data["role"],
        text=data["text"],
        created_at=_plain(data["created_at"]),
        turn_id=data.get("turn_id"),
    )


def _chat_from(user_id: str, snap: Snapshot) -> Chat:
    data = snap.to_dict() or {}
    return Chat(
        id=snap.id,
        user_id=user_id,
        created_at=_plain(data["created_at"]),
        updated_at=_plain(data["updated_at"]),
        summary=data.get("summary", ""),
        summarized_until=_plain(data.get("summarized_until")),
        pending=_model_or_none(PendingQuestion, data.get("pending")),
    )
