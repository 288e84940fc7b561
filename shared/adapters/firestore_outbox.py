"""``Outbox`` on Firestore: the record of every message sent on the user's behalf.

Layout, under the user (erased and exported with the rest of the user's tree)::

    users/{uid}/outbox/{sha256(idempotency_key)}    idempotency_key, message (map),
                                                    sent_at, provider, status, message_id,
                                                    relay_code, relay_reply, settled_at

Exactly once per key: the record is written with ``create()``, which fails if the document
exists; the loser of a race (or a retry after a lost reply) reads and returns the winner's
record and sends nothing. Without a ``Mailer`` (provider ``firestore``) recording is the
delivery: the record is the sent message. With one (provider ``smtp``) the record is created
``pending``, only its creator hands the message to the relay, once, and then settles it
with the answer (sent, failed or unknown). A run that dies between the two leaves it
``pending``: a redelivery sees the record and sends nothing (at most once; the user is
told the outcome is unknown).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import firestore
from google.cloud.firestore_v1.document import DocumentReference

from shared.adapters.agent_data_rules import OUTBOX, outbox_doc_id, outbox_record, settled
from shared.adapters.doc_ids import doc_id
from shared.adapters.firestore_erasure import fenced
from shared.adapters.gcp_errors import transient_as_unavailable
from shared.errors import DependencyUnavailable
from shared.models.agent_data import OutboundEmail, SentMessage
from shared.ports import Clock, Mailer

PROVIDER = "firestore"


def _decode(ref: DocumentReference, data: dict[str, Any]) -> SentMessage:
    return SentMessage.model_validate({**data, "id": ref.id})


class FirestoreOutbox:
    def __init__(
        self,
        client: firestore.Client,
        clock: Clock,
        mailer: Mailer | None = None,
        since: datetime | None = None,
    ) -> None:
        self._client = client
        self._clock = clock
        self._mailer = mailer
        self._since = since  # set: sends of work created then, fenced by the erasure mark

    def fenced(self, since: datetime) -> FirestoreOutbox:
        return FirestoreOutbox(self._client, self._clock, self._mailer, since)

    def _ref(self, user_id: str, idempotency_key: str) -> DocumentReference:
        user = self._client.collection("users").document(doc_id(user_id))
        ref: DocumentReference = user.collection(OUTBOX).document(outbox_doc_id(idempotency_key))
        return ref

    def send(self, user_id: str, message: OutboundEmail, idempotency_key: str) -> SentMessage:
        ref = self._ref(user_id, idempotency_key)
        mailer = self._mailer
        record = outbox_record(idempotency_key, message, self._clock.now(), mailer, PROVIDER)
        with transient_as_unavailable("firestore"):
            try:
                self._create(user_id, ref, record.model_dump(exclude={"id"}))
            except gexc.AlreadyExists:
                earlier = self.get_sent(user_id, idempotency_key)
                if earlier is None:  # created, then erased with the account meanwhile
                    raise DependencyUnavailable(
                        "firestore: outbox record vanished; retry"
                    ) from None
                return earlier
        return record if mailer is None else self._deliver(ref, record, mailer)

    def _deliver(self, ref: DocumentReference, record: SentMessage, mailer: Mailer) -> SentMessage:
        answer = mailer.deliver(record.message, record.message_id)
        done = settled(record, answer, self._clock.now())
        change = done.model_dump(include={"status", "relay_code", "relay_reply", "settled_at"})
        try:
            with transient_as_unavailable("firestore"):
                ref.update(change)
        except gexc.NotFound:  # erased with the account meanwhile: nothing to settle
            pass
        except DependencyUnavailable:
            # The relay's answer must not be lost to a retry that would find the record
            # pending: the caller still gets it (and tells the user); the record says pending.
            pass
        return done

    def _create(self, user_id: str, ref: DocumentReference, data: dict[str, Any]) -> None:
        if self._since is None:
            ref.create(data)
            return
        fenced(self._client, user_id, self._since, lambda tx: tx.create(ref, data))

    def get_sent(self, user_id: str, idempotency_key: str) -> SentMessage | None:
        ref = self._ref(user_id, idempotency_key)
        with transient_as_unavailable("firestore"):
            snap = ref.get()
        return _decode(ref, snap.to_dict() or {}) if snap.exists else None
