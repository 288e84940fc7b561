"""``ConversationStore`` on Firestore (the sync client, injected).

Layout, everything under the user so another user's chat is simply not found::

    users/{uid}/chats/{chat_id}                  created_at, updated_at, message_count,
                                                 summary, summarized_until,
                                                 control (map: the HitlControl record)
    users/{uid}/chats/{chat_id}/messages/{id}    role, text, created_at, turn_id
    users/{uid}/turns/{client_message_id}        status (running|done|failed), chat_id, turn_id,
                                                 response (map), metadata (map, once done),
                                                 lease_expires_at, created_at, updated_at,
                                                 expire_at (TTL policy field)

Encoding: ``firestore_chat_codec``. Timestamps come back as UTC datetimes of microsecond
precision, whatever the zone they were written in.

RPCs: ``complete_turn`` makes exactly one, a Commit of one batch holding the messages, the
turn record and the chat's update or creation (no read). ``append_message`` commits one
batch; ``release_turn`` one update; ``claim_turn`` one transaction (BeginTransaction, one
BatchGet of the turn and the chat, Commit), as does ``open_interrupt``;
``put_control`` one update.
``get_chat`` and ``get_turn`` read one document; ``recent_messages`` and ``list_chats`` run
one query each (``list_chats`` orders by ``updated_at``: a single-field index).

Indexes: ``recent_messages`` filters ``created_at > after`` and orders by ``created_at``
descending then by document id descending, which is Firestore's implicit order for that
query anyway. A range and an order on the same single field are served by the automatic
single-field (descending) index: no composite index is needed in production (the emulator
does not check indexes at all).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.document import DocumentReference
from google.cloud.firestore_v1.field_path import FieldPath

from shared.adapters.doc_ids import doc_id
from shared.adapters.firestore_chat_codec import (
    chat_from,
    chat_update_data,
    control_data,
    message_data,
    message_from,
    model_or_none,
    plain,
)
from shared.adapters.firestore_tx import run_transaction
from shared.adapters.gcp_errors import firestore_errors
from shared.adapters.turn_claims import ClaimRequest, Decision, SeenTurn, decide
from shared.errors import Conflict, NotFound
from shared.models.domain import (
    Chat,
    ChatUpdate,
    HitlControl,
    Message,
    TurnClaim,
    TurnMetadata,
    TurnRecord,
)
from shared.models.wire import TurnResponse
from shared.ports import ResumeClaim

DEFAULT_TURN_TTL = timedelta(days=7)


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
        with firestore_errors():
            snap = self._chat(user_id, chat_id).get()
        return chat_from(user_id, snap) if snap.exists else None

    def create_chat(self, user_id: str, chat_id: str, now: datetime) -> Chat:
        ref = self._chat(user_id, chat_id)
        data = {"created_at": now, "updated_at": now, "summary": "", "message_count": 0}
        with firestore_errors():
            try:
                ref.create(data)
            except gexc.AlreadyExists:
                return chat_from(user_id, ref.get())
        return Chat(id=chat_id, user_id=user_id, created_at=now, updated_at=now)

    def message_count(self, user_id: str, chat_id: str) -> int:
        """The chat's message counter (0 for a missing chat)."""
        with firestore_errors():
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
        with firestore_errors():
            newest_first = [message_from(snap) for snap in query.stream()]
        return newest_first[::-1]

    def list_chats(self, user_id: str, limit: int) -> list[Chat]:
        if limit <= 0:
            return []
        chats = self._client.collection("users").document(doc_id(user_id)).collection("chats")
        query = chats.order_by("updated_at", direction=firestore.Query.DESCENDING).limit(limit)
        with firestore_errors():
            return [chat_from(user_id, snap) for snap in query.stream()]

    def append_message(self, user_id: str, chat_id: str, message: Message) -> bool:
        chat = self._chat(user_id, chat_id)
        batch = self._client.batch()
        message_ref = chat.collection("messages").document(doc_id(message.id))
        batch.create(message_ref, message_data(message))
        batch.update(
            chat, {"updated_at": message.created_at, "message_count": firestore.Increment(1)}
        )
        with firestore_errors():
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
        new_chat: bool = True,
        resume: ResumeClaim | None = None,
    ) -> TurnClaim:
        turn_ref, chat_ref = self._turn(user_id, client_message_id), self._chat(user_id, chat_id)
        request = ClaimRequest(chat_id, turn_id, now, lease_seconds, new_chat, resume)

        def read(transaction: firestore.Transaction | None) -> tuple[Any, Decision]:
            found = self._client.get_all([turn_ref, chat_ref], transaction=transaction)
            snaps = {snap.reference.path: snap for snap in found}
            turn_snap, chat_snap = snaps[turn_ref.path], snaps[chat_ref.path]
            turn = turn_snap.to_dict() if turn_snap.exists else None
            chat = chat_from(user_id, chat_snap) if chat_snap.exists else None
            return turn, decide(_seen(turn), chat, request)

        def settled() -> TurnClaim | None:
            """A claim that writes nothing (done, running, not pending...) needs no lock."""
            _, decision = read(None)
            quiet = not decision.write_turn and decision.control is None
            return decision.claim if quiet else None

        @firestore.transactional
        def claim(transaction: firestore.Transaction) -> TurnClaim:
            turn, decision = read(transaction)
            if decision.write_turn:
                lease_until = now + timedelta(seconds=lease_seconds)
                transaction.set(
                    turn_ref, self._running(turn or {}, decision.claim, now, lease_until)
                )
            if decision.control is not None:
                transaction.update(chat_ref, {"control": control_data(decision.control)})
            return decision.claim

        with firestore_errors():
            result: TurnClaim = run_transaction(self._client, claim, settled=settled)
        return result

    def _running(
        self, earlier: dict[str, Any], claim: TurnClaim, now: datetime, lease_until: datetime
    ) -> dict[str, Any]:
        return {
            "status": "running",
            "chat_id": claim.chat_id,
            "turn_id": claim.turn_id,
            "response": None,
            "lease_expires_at": lease_until,
            "created_at": earlier.get("created_at", now),
            "updated_at": now,
            "expire_at": now + self._turn_ttl,
        }

    def open_interrupt(
        self, user_id: str, chat_id: str, control: HitlControl, question: Message, now: datetime
    ) -> bool:
        chat_ref = self._chat(user_id, chat_id)

        @firestore.transactional
        def open_(transaction: firestore.Transaction) -> bool:
            snap = chat_ref.get(transaction=transaction)
            if not snap.exists:
                raise NotFound("chat not found")
            current = chat_from(user_id, snap).control
            if current.interrupt is not None and current.status != "idle":
                # opened already (a redelivery), or another interrupt waits
                return (
                    control.interrupt is not None and current.interrupt.id == control.interrupt.id
                )
            transaction.create(
                chat_ref.collection("messages").document(doc_id(question.id)),
                message_data(question),
            )
            transaction.update(
                chat_ref,
                {
                    "control": control_data(control),
                    "updated_at": now,
                    "message_count": firestore.Increment(1),
                },
            )
            return True

        with firestore_errors():
            opened: bool = run_transaction(self._client, open_)
        return opened

    def put_control(self, user_id: str, chat_id: str, control: HitlControl) -> bool:
        with firestore_errors():
            try:
                self._chat(user_id, chat_id).update({"control": control_data(control)})
            except gexc.NotFound:
                return False
        return True

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
                chat.collection("messages").document(doc_id(message.id)), message_data(message)
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
            **chat_update_data(chat_update),
        }
        if new_chat:  # in the same commit: the first turn of a chat costs no extra write
            fields = {"created_at": now, "summary": "", **fields}
            # Listed fields replace their whole value (a map too), as update() does.
            batch.set(chat, fields, merge=list(fields))
        else:
            batch.update(chat, fields)
        with firestore_errors():
            try:
                batch.commit()
            except gexc.AlreadyExists:
                return  # this turn's messages are already stored: an earlier call completed it
            except gexc.NotFound as exc:
                raise Conflict("turn not claimed or chat missing") from exc

    def get_turn(self, user_id: str, client_message_id: str) -> TurnRecord | None:
        with firestore_errors():
            snap = self._turn(user_id, client_message_id).get()
        if not snap.exists:
            return None
        data = snap.to_dict() or {}
        return TurnRecord(
            status=data["status"],
            chat_id=data["chat_id"],
            turn_id=data["turn_id"],
            response=model_or_none(TurnResponse, data.get("response")),
            metadata=model_or_none(TurnMetadata, data.get("metadata")),
        )

    def release_turn(self, user_id: str, client_message_id: str) -> None:
        # Marked failed rather than deleted, so the retry keeps the turn's chat.
        with firestore_errors():
            try:
                self._turn(user_id, client_message_id).update(
                    {"status": "failed", "lease_expires_at": None}
                )
            except gexc.NotFound:
                return


def _seen(data: dict[str, Any] | None) -> SeenTurn | None:
    if data is None:
        return None
    return SeenTurn(
        status=data["status"],
        chat_id=data["chat_id"],
        turn_id=data["turn_id"],
        lease_expires_at=plain(data.get("lease_expires_at")),
        response=model_or_none(TurnResponse, data.get("response")),
    )
