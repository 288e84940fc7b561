"""The turn's life in Firestore: claimed (or queued behind another turn of its chat), kept
alive while it runs, completed, finished, or released after a failure.

``users/{uid}/turns/{client_message_id}``: status (queued|running|done|failed), chat_id,
turn_id, owner (the request that claimed it), arrival, response, metadata, outbox,
lease_expires_at, created_at, updated_at, expire_at (TTL policy field). The chat's ``run``
map is the chat's holder and queue (``ChatRun``, decided in ``turn_claims``).

RPCs: ``claim_turn`` one transaction (BeginTransaction, one BatchGet of the turn, the chat
and the account's erasure mark, Commit: nothing starts while the account is erased);
``complete_turn`` one Commit of one batch (messages, turn record, the chat's update or
creation, and with ``finish`` the chat's release); ``finish_turn`` one Commit; ``beat`` one
read (the chat and the erasure mark), plus one Commit when it moves the leases on;
``release_turn`` and ``leave_queue`` one transaction each (failure paths).

Releasing the chat at the end is a plain write, not a transaction: a holder whose lease ran
out while it still ran (its heartbeat failed for a whole lease) learns it from ``beat``
("lost") and then leaves the chat alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import firestore

from shared.adapters.doc_ids import doc_id
from shared.adapters.firestore_chat_codec import (
    RUN_RELEASED,
    chat_from,
    chat_update_data,
    control_data,
    message_data,
    model_or_none,
    plain,
    run_data,
    run_from,
)
from shared.adapters.firestore_erasure import blocks, erasure_ref
from shared.adapters.firestore_turn_outbox import FirestoreTurnOutbox, outbox_fields
from shared.adapters.firestore_tx import run_transaction
from shared.adapters.gcp_errors import firestore_errors
from shared.adapters.turn_claims import ClaimRequest, Decision, SeenTurn, decide, erasing
from shared.errors import Conflict
from shared.models.domain import (
    ChatUpdate,
    Handoff,
    HitlControl,
    Message,
    TurnClaim,
    TurnMetadata,
    TurnRecord,
)
from shared.models.wire import MultitaskStrategy, TurnResponse
from shared.ports import Beat, ResumeClaim

DEFAULT_TURN_TTL = timedelta(days=7)


class FirestoreTurns(FirestoreTurnOutbox):
    def __init__(self, client: firestore.Client, turn_ttl: timedelta = DEFAULT_TURN_TTL) -> None:
        super().__init__(client)
        self._turn_ttl = turn_ttl

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
        owner: str = "",
        strategy: MultitaskStrategy = "enqueue",
        wait_seconds: float = 30.0,
    ) -> TurnClaim:
        turn_ref, chat_ref = self._turn(user_id, client_message_id), self._chat(user_id, chat_id)
        request = ClaimRequest(
            chat_id, turn_id, now, lease_seconds, new_chat, resume, owner, strategy, wait_seconds
        )

        erasure = erasure_ref(self._client, user_id)

        def read(transaction: firestore.Transaction | None) -> tuple[Any, Decision]:
            found = self._client.get_all([turn_ref, chat_ref, erasure], transaction=transaction)
            snaps = {snap.reference.path: snap for snap in found}
            turn_snap, chat_snap = snaps[turn_ref.path], snaps[chat_ref.path]
            if blocks(snaps[erasure.path].to_dict(), None):  # the account is being erased
                return None, erasing(request)
            turn = turn_snap.to_dict() if turn_snap.exists else None
            chat = chat_from(user_id, chat_snap) if chat_snap.exists else None
            return turn, decide(_seen(turn), chat, request)

        def settled() -> TurnClaim | None:
            """A claim that writes nothing (done, running, not pending...) needs no lock."""
            _, decision = read(None)
            return decision.claim if decision.quiet else None

        @firestore.transactional
        def claim(transaction: firestore.Transaction) -> TurnClaim:
            turn, decision = read(transaction)
            if decision.write_turn:
                transaction.set(turn_ref, self._claimed(turn or {}, decision, request))
            chat_fields: dict[str, Any] = {}
            if decision.control is not None:
                chat_fields["control"] = control_data(decision.control)
            if decision.run is not None:
                chat_fields["run"] = run_data(decision.run)
            if chat_fields:
                transaction.update(chat_ref, chat_fields)
            return decision.claim

        with firestore_errors():
            result: TurnClaim = run_transaction(self._client, claim, settled=settled)
        return result

    def _claimed(
        self, earlier: dict[str, Any], decision: Decision, request: ClaimRequest
    ) -> dict[str, Any]:
        now, claim = request.now, decision.claim
        return {
            "status": decision.status,
            "chat_id": claim.chat_id,
            "turn_id": claim.turn_id,
            "owner": request.owner,
            "arrival": claim.arrival,
            "response": None,
            "lease_expires_at": decision.lease_until(request),
            "created_at": earlier.get("created_at", now),
            "updated_at": now,
            "expire_at": now + self._turn_ttl,
        }

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
        outbox: Sequence[Handoff] = (),
        finish: bool = False,
    ) -> None:
        """One batch, one Commit: the messages (created, so a repeated completion writes
        nothing), the turn's response, metadata and outbox, and the chat's counters and
        ``chat_update``, creating the chat on its first turn; with ``finish`` also the
        release of the turn's lease and of the chat. Raises ``Conflict`` for an unclaimed
        turn (or one an account erasure deleted) or a missing chat."""
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
                **outbox_fields(user_id, outbox),
                **({"lease_expires_at": None} if finish else {}),
            },
        )
        fields = {
            "updated_at": now,
            "message_count": firestore.Increment(len(messages)),
            **chat_update_data(chat_update),
            **({"outbox": firestore.ArrayUnion([client_message_id])} if outbox else {}),
        }
        if new_chat:  # in the same commit: the first turn of a chat costs no extra write
            fields = {"created_at": now, "summary": "", **fields}
            # Listed fields replace their whole value (a map too), as update() does.
            batch.set(chat, fields, merge=list(fields))
        else:
            batch.update(chat, {**fields, **(RUN_RELEASED if finish else {})})
        with firestore_errors():
            try:
                batch.commit()
            except gexc.AlreadyExists:
                return  # this turn's messages are already stored: an earlier call completed it
            except gexc.NotFound as exc:
                raise Conflict("turn not claimed or chat missing") from exc

    def finish_turn(
        self,
        user_id: str,
        client_message_id: str,
        chat_id: str,
        control: HitlControl | None = None,
        release_chat: bool = True,
    ) -> None:
        batch = self._client.batch()
        batch.update(self._turn(user_id, client_message_id), {"lease_expires_at": None})
        chat_fields: dict[str, Any] = {**(RUN_RELEASED if release_chat else {})}
        if control is not None:
            chat_fields["control"] = control_data(control)
        if chat_fields:
            batch.update(self._chat(user_id, chat_id), chat_fields)
        with firestore_errors():
            try:
                batch.commit()
            except gexc.NotFound:
                return  # erased meanwhile: nothing to release

    def beat(
        self,
        user_id: str,
        client_message_id: str,
        chat_id: str,
        owner: str,
        lease_until: datetime | None = None,
    ) -> Beat:
        turn_ref, chat_ref = self._turn(user_id, client_message_id), self._chat(user_id, chat_id)
        erasure = erasure_ref(self._client, user_id)
        with firestore_errors():
            snaps = {s.reference.path: s for s in self._client.get_all([chat_ref, erasure])}
        if blocks(snaps[erasure.path].to_dict(), None):
            return "gone"  # the account is being erased: stop, the erasure waits for it
        snap = snaps[chat_ref.path]
        run = run_from((snap.to_dict() or {}).get("run")) if snap.exists else None
        beat: Beat = "go"
        if run is not None and run.owner not in (None, owner):
            beat = "lost"
        elif run is not None and run.stop:
            beat = "stop"
        if lease_until is not None and beat != "lost":
            batch = self._client.batch()
            batch.update(turn_ref, {"lease_expires_at": lease_until})
            if run is not None:
                batch.update(chat_ref, {"run.lease_until": lease_until})
            with firestore_errors():
                try:
                    batch.commit()
                except gexc.NotFound:
                    return "gone"
        return beat

    def leave_queue(
        self, user_id: str, client_message_id: str, chat_id: str, owner: str, now: datetime
    ) -> None:
        self._let_go(user_id, client_message_id, chat_id, owner, now)

    def release_turn(
        self,
        user_id: str,
        client_message_id: str,
        chat_id: str | None = None,
        owner: str | None = None,
    ) -> None:
        """Marked failed rather than deleted, so the retry keeps the turn's chat."""
        if chat_id is None or owner is None:
            with firestore_errors():
                try:
                    self._turn(user_id, client_message_id).update(_FAILED)
                except gexc.NotFound:
                    return
            return
        self._let_go(user_id, client_message_id, chat_id, owner, None)

    def _let_go(
        self,
        user_id: str,
        client_message_id: str,
        chat_id: str,
        owner: str,
        now: datetime | None,
    ) -> None:
        """The turn failed (``now`` None: it held the chat) or stopped waiting (``now``):
        its record says failed and the chat forgets it, in one transaction."""
        turn_ref, chat_ref = self._turn(user_id, client_message_id), self._chat(user_id, chat_id)

        @firestore.transactional
        def let_go(transaction: firestore.Transaction) -> None:
            found = self._client.get_all([turn_ref, chat_ref], transaction=transaction)
            snaps = {snap.reference.path: snap for snap in found}
            turn, chat = snaps[turn_ref.path], snaps[chat_ref.path]
            if chat.exists:
                run = run_from((chat.to_dict() or {}).get("run"))
                if now is not None and run.waits(owner):
                    transaction.update(chat_ref, {"run": run_data(run.without(owner, now))})
                elif now is None and run.owner == owner:
                    transaction.update(chat_ref, RUN_RELEASED)
            if turn.exists and (turn.to_dict() or {}).get("status") in ("queued", "running"):
                transaction.update(turn_ref, _FAILED)

        with firestore_errors():
            run_transaction(self._client, let_go)

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
            arrival=data.get("arrival"),
        )


_FAILED = {"status": "failed", "lease_expires_at": None}


def _seen(data: dict[str, Any] | None) -> SeenTurn | None:
    if data is None:
        return None
    return SeenTurn(
        status=data["status"],
        chat_id=data["chat_id"],
        turn_id=data["turn_id"],
        lease_expires_at=plain(data.get("lease_expires_at")),
        response=model_or_none(TurnResponse, data.get("response")),
        owner=data.get("owner"),
    )
