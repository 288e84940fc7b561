"""``ConversationStore`` on Firestore (the sync client, injected).

Layout, everything under the user so another user's chat is simply not found::

    users/{uid}/chats/{chat_id}                  created_at, updated_at, message_count,
                                                 summary, summarized_until,
                                                 control (map: the HitlControl record),
                                                 run (map: the ChatRun holder and queue),
                                                 outbox (turns with unsent handoffs)
    users/{uid}/chats/{chat_id}/messages/{id}    role, text, created_at, turn_id
    users/{uid}/turns/{client_message_id}        see ``firestore_turns``

Encoding: ``firestore_chat_codec``. Timestamps come back as UTC datetimes of microsecond
precision, whatever the zone they were written in.

RPCs: ``append_message`` commits one batch; ``open_interrupt`` is one transaction
(BeginTransaction, one read of the chat, Commit); ``put_control`` one update (the turn's
own writes: ``firestore_turns``).
``get_chat`` and ``get_turn`` read one document; ``recent_messages`` and ``list_chats`` run
one query each (``list_chats`` orders by ``updated_at``: a single-field index).

Indexes: ``recent_messages`` filters ``created_at > after`` and orders by ``created_at``
descending then by document id descending, which is Firestore's implicit order for that
query anyway. A range and an order on the same single field are served by the automatic
single-field (descending) index: no composite index is needed in production (the emulator
does not check indexes at all).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from google.api_core import exceptions as gexc
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.field_path import FieldPath

from shared.adapters.doc_ids import doc_id
from shared.adapters.firestore_chat_codec import (
    chat_from,
    control_data,
    message_data,
    message_from,
)
from shared.adapters.firestore_keyset import keyset_query
from shared.adapters.firestore_turns import DEFAULT_TURN_TTL, FirestoreTurns
from shared.adapters.firestore_tx import run_transaction
from shared.adapters.gcp_errors import firestore_errors
from shared.errors import NotFound
from shared.models.domain import (
    Chat,
    HitlControl,
    Message,
)
from shared.ports import Keyset, MessagePage

__all__ = ["DEFAULT_TURN_TTL", "FirestoreConversationStore"]


class FirestoreConversationStore(FirestoreTurns):
    """Chats, messages and the chat's control record here; the turn's life in
    ``FirestoreTurns``; the turn's outbox in ``FirestoreTurnOutbox``."""

    # -- chats and messages -----------------------------------------------------------------
    def get_chat(self, user_id: str, chat_id: str) -> Chat | None:
        with firestore_errors():
            snap = self._chat(user_id, chat_id).get()
        return chat_from(user_id, snap) if snap.exists else None

    def create_chat(self, user_id: str, chat_id: str, now: datetime, title: str = "") -> Chat:
        ref = self._chat(user_id, chat_id)
        data = {
            "created_at": now,
            "updated_at": now,
            "title": title,
            "summary": "",
            "message_count": 0,
        }
        with firestore_errors():
            try:
                ref.create(data)
            except gexc.AlreadyExists:
                return chat_from(user_id, ref.get())
        return Chat(id=chat_id, user_id=user_id, created_at=now, updated_at=now, title=title)

    def retitle(
        self, user_id: str, chat_id: str, title: str, check: Callable[[Chat], None]
    ) -> Chat | None:
        ref = self._chat(user_id, chat_id)

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> Chat | None:
            snap = ref.get(transaction=transaction)
            if not snap.exists:
                return None
            chat = chat_from(user_id, snap)
            check(chat)  # raises to refuse: the transaction writes nothing
            transaction.update(ref, {"title": title})
            return chat.model_copy(update={"title": title})

        with firestore_errors():
            renamed: Chat | None = run_transaction(self._client, run)
        return renamed

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

    def list_chats(self, user_id: str, limit: int, after: Keyset | None = None) -> list[Chat]:
        if limit <= 0:
            return []
        chats = self._client.collection("users").document(doc_id(user_id)).collection("chats")
        query = keyset_query(chats, "updated_at", limit, after, descending=True)
        with firestore_errors():
            return [chat_from(user_id, snap) for snap in query.stream()]

    def list_messages(self, user_id: str, chat_id: str, page: MessagePage) -> list[Message]:
        if page.limit <= 0:
            return []
        messages = self._chat(user_id, chat_id).collection("messages")
        query = keyset_query(messages, "created_at", page.limit, page.after, page.newest_first)
        if page.since is not None:  # same field as the order: the single-field index serves it
            query = query.where(filter=FieldFilter("created_at", ">", page.since))
        with firestore_errors():
            return [message_from(snap) for snap in query.stream()]

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
