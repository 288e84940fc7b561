"""The turn record's outbox in Firestore: handoffs a queue could not take.

``users/{uid}/turns/{client_message_id}`` keeps ``outbox`` (the handoffs, as JSON maps),
``outbox_pending: true`` and ``outbox_user`` while it is not empty; the chat lists the turn
in its ``outbox`` array, so the chat's next claim (which reads the chat anyway) sees it at no
cost. The scheduled drain finds pending turns of every user with one collection-group query
on ``outbox_pending`` (a single-field collection-group index, terraform/data.tf).

Also the document references every part of the conversation store shares.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.document import DocumentReference

from shared.adapters.doc_ids import doc_id
from shared.adapters.gcp_errors import firestore_errors
from shared.models.domain import Handoff
from shared.ports import OutboxEntry


def outbox_fields(user_id: str, outbox: Sequence[Handoff]) -> dict[str, Any]:
    """The turn record's fields for a non-empty outbox (none for an empty one)."""
    if not outbox:
        return {}
    return {
        "outbox": [handoff.model_dump(mode="json") for handoff in outbox],
        "outbox_pending": True,
        "outbox_user": user_id,
    }


class FirestoreTurnOutbox:
    def __init__(self, client: firestore.Client) -> None:
        self._client = client

    # -- references -------------------------------------------------------------------------
    def _user_doc(self, user_id: str, collection: str, document: str) -> DocumentReference:
        user = self._client.collection("users").document(doc_id(user_id))
        ref: DocumentReference = user.collection(collection).document(doc_id(document))
        return ref

    def _chat(self, user_id: str, chat_id: str) -> DocumentReference:
        return self._user_doc(user_id, "chats", chat_id)

    def _turn(self, user_id: str, client_message_id: str) -> DocumentReference:
        return self._user_doc(user_id, "turns", client_message_id)

    # -- the outbox -------------------------------------------------------------------------
    def outbox(self, user_id: str, client_message_id: str) -> list[Handoff]:
        with firestore_errors():
            snap = self._turn(user_id, client_message_id).get(field_paths=["outbox"])
        raw = (snap.to_dict() or {}).get("outbox") or [] if snap.exists else []
        return [Handoff.model_validate(item) for item in raw]

    def settle_outbox(
        self, user_id: str, chat_id: str, client_message_id: str, remaining: Sequence[Handoff]
    ) -> None:
        turn = self._turn(user_id, client_message_id)
        batch = self._client.batch()
        if remaining:
            batch.update(turn, outbox_fields(user_id, remaining))
        else:
            gone = firestore.DELETE_FIELD
            batch.update(turn, {"outbox": gone, "outbox_pending": gone, "outbox_user": gone})
            batch.update(
                self._chat(user_id, chat_id),
                {"outbox": firestore.ArrayRemove([client_message_id])},
            )
        with firestore_errors():
            try:
                batch.commit()
            except gexc.NotFound:
                return  # the turn or the chat is gone (an erased account): nothing to send

    def turns_with_outbox(self, limit: int) -> list[OutboxEntry]:
        query = (
            self._client.collection_group("turns")
            .where(filter=FieldFilter("outbox_pending", "==", True))
            .select(["outbox_user", "chat_id"])
            .limit(limit)
        )
        with firestore_errors():
            found = list(query.stream())
        return [
            OutboxEntry(str(data["outbox_user"]), str(data["chat_id"]), snap.id)
            for snap in found
            if (data := snap.to_dict() or {}).get("outbox_user")
        ]
