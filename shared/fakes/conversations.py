"""In-memory ``ConversationStore`` with the Firestore adapter's semantics (tests/contract).

Claims follow the same rules (``turn_claims.decide``); a completion is all or nothing: a
repeated one, or one of an unclaimed turn, changes nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from shared.adapters import keyset
from shared.adapters.doc_ids import doc_id
from shared.adapters.turn_claims import ClaimRequest, SeenTurn, decide
from shared.errors import Conflict, NotFound
from shared.models.domain import (
    Chat,
    ChatUpdate,
    Handoff,
    HitlControl,
    Message,
    TurnClaim,
    TurnMetadata,
    TurnRecord,
)
from shared.models.wire import MultitaskStrategy, TurnResponse
from shared.ports import Beat, Keyset, MessagePage, OutboxEntry, ResumeClaim


@dataclass
class _ChatRecord:
    chat: Chat
    message_count: int = 0
    messages: dict[str, Message] = field(default_factory=dict)


@dataclass
class _TurnRecord:
    status: str
    chat_id: str
    turn_id: str
    lease_expires_at: datetime | None
    response: TurnResponse | None = None
    metadata: TurnMetadata | None = None
    outbox: list[Handoff] = field(default_factory=list)
    owner: str = ""
    arrival: int | None = None


class FakeConversationStore:
    def __init__(self) -> None:
        self._chats: dict[tuple[str, str], _ChatRecord] = {}
        self._turns: dict[tuple[str, str], _TurnRecord] = {}
        self._lock = threading.Lock()

    def get_chat(self, user_id: str, chat_id: str) -> Chat | None:
        record = self._chats.get((doc_id(user_id), doc_id(chat_id)))
        return record.chat if record else None

    def create_chat(self, user_id: str, chat_id: str, now: datetime, title: str = "") -> Chat:
        with self._lock:
            return self._create(user_id, chat_id, now, title).chat

    def message_count(self, user_id: str, chat_id: str) -> int:
        """The chat's message counter (0 for a missing chat)."""
        record = self._chats.get((user_id, chat_id))
        return record.message_count if record else 0

    def recent_messages(
        self, user_id: str, chat_id: str, limit: int, after: datetime | None = None
    ) -> list[Message]:
        record = self._chats.get((user_id, chat_id))
        if record is None or limit <= 0:
            return []
        kept = [m for m in record.messages.values() if after is None or m.created_at > after]
        return sorted(kept, key=lambda m: (m.created_at, m.id))[-limit:]

    def list_chats(self, user_id: str, limit: int, after: Keyset | None = None) -> list[Chat]:
        mine = [record.chat for (owner, _), record in self._chats.items() if owner == user_id]
        return keyset.page(mine, lambda c: (c.updated_at, c.id), limit, after, descending=True)

    def list_messages(self, user_id: str, chat_id: str, page: MessagePage) -> list[Message]:
        record = self._chats.get((doc_id(user_id), doc_id(chat_id)))
        found = [] if record is None else list(record.messages.values())
        since = [m for m in found if page.since is None or m.created_at > page.since]
        return keyset.page(
            since, lambda m: (m.created_at, m.id), page.limit, page.after, page.newest_first
        )

    def retitle(
        self, user_id: str, chat_id: str, title: str, check: Callable[[Chat], None]
    ) -> Chat | None:
        with self._lock:
            record = self._chats.get((doc_id(user_id), doc_id(chat_id)))
            if record is None:
                return None
            check(record.chat)
            record.chat = record.chat.model_copy(update={"title": title})
            return record.chat

    def append_message(self, user_id: str, chat_id: str, message: Message) -> bool:
        with self._lock:
            record = self._chats.get((user_id, chat_id))
            if record is None:
                raise NotFound("chat not found")
            if message.id in record.messages:
                return False
            self._add(record, [message], message.created_at)
        return True

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
        request = ClaimRequest(
            chat_id, turn_id, now, lease_seconds, new_chat, resume, owner, strategy, wait_seconds
        )
        with self._lock:
            turn = self._turns.get((user_id, client_message_id))
            seen = None
            if turn is not None:
                seen = SeenTurn(
                    turn.status, turn.chat_id, turn.turn_id, turn.lease_expires_at,
                    turn.response, turn.owner,
                )  # fmt: skip
            record = self._chats.get((user_id, chat_id))
            decision = decide(seen, record.chat if record else None, request)
            claim = decision.claim
            if decision.write_turn:
                self._turns[(user_id, client_message_id)] = _TurnRecord(
                    status=decision.status,
                    chat_id=claim.chat_id,
                    turn_id=claim.turn_id,
                    lease_expires_at=decision.lease_until(request),
                    owner=owner,
                    arrival=claim.arrival,
                )
            if record is not None:
                changes: dict[str, Any] = {}
                if decision.control is not None:
                    changes["control"] = decision.control
                if decision.run is not None:
                    changes["run"] = decision.run
                record.chat = record.chat.model_copy(update=changes)
        return claim

    def open_interrupt(
        self, user_id: str, chat_id: str, control: HitlControl, question: Message, now: datetime
    ) -> bool:
        with self._lock:
            record = self._chats.get((user_id, chat_id))
            if record is None:
                raise NotFound("chat not found")
            current = record.chat.control
            if current.interrupt is not None and current.status != "idle":
                # opened already (a redelivery), or another interrupt waits
                return (
                    control.interrupt is not None and current.interrupt.id == control.interrupt.id
                )
            if question.id not in record.messages:
                self._add(record, [question], now)
            record.chat = record.chat.model_copy(update={"control": control})
        return True

    def put_control(self, user_id: str, chat_id: str, control: HitlControl) -> bool:
        with self._lock:
            record = self._chats.get((user_id, chat_id))
            if record is None:
                return False
            record.chat = record.chat.model_copy(update={"control": control})
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
        outbox: Sequence[Handoff] = (),
        finish: bool = False,
    ) -> None:
        with self._lock:
            turn = self._turns.get((user_id, client_message_id))
            record = self._chats.get((user_id, response.chat_id))
            if record is not None and any(m.id in record.messages for m in messages):
                return  # an earlier call completed this turn
            if turn is None or (record is None and not new_chat):
                raise Conflict("turn not claimed or chat missing")
            if record is None:
                record = self._create(user_id, response.chat_id, now)
            elif new_chat:  # Firestore's merge: the chat's fields as on a new chat
                record.chat = record.chat.model_copy(update={"created_at": now, "summary": ""})
            self._add(record, messages, now)
            record.chat = record.chat.model_copy(update=_chat_changes(chat_update))
            turn.status, turn.turn_id = "done", response.turn_id
            turn.response, turn.metadata = response, metadata
            if finish:
                turn.lease_expires_at = None
                record.chat = record.chat.model_copy(update={"run": record.chat.run.released()})
            if outbox:
                turn.outbox = list(outbox)
                listed = [*record.chat.outbox, client_message_id]
                record.chat = record.chat.model_copy(update={"outbox": list(dict.fromkeys(listed))})

    def outbox(self, user_id: str, client_message_id: str) -> list[Handoff]:
        turn = self._turns.get((user_id, client_message_id))
        return list(turn.outbox) if turn is not None else []

    def settle_outbox(
        self, user_id: str, chat_id: str, client_message_id: str, remaining: Sequence[Handoff]
    ) -> None:
        with self._lock:
            turn = self._turns.get((user_id, client_message_id))
            record = self._chats.get((user_id, chat_id))
            if turn is None or record is None:
                return
            turn.outbox = list(remaining)
            if not remaining:
                left = [cmid for cmid in record.chat.outbox if cmid != client_message_id]
                record.chat = record.chat.model_copy(update={"outbox": left})

    def turns_with_outbox(self, limit: int) -> list[OutboxEntry]:
        pending = [
            OutboxEntry(user_id, turn.chat_id, cmid)
            for (user_id, cmid), turn in self._turns.items()
            if turn.outbox
        ]
        return pending[:limit]

    def get_turn(self, user_id: str, client_message_id: str) -> TurnRecord | None:
        turn = self._turns.get((doc_id(user_id), doc_id(client_message_id)))
        if turn is None:
            return None
        return TurnRecord.model_validate(
            {
                "status": turn.status,
                "chat_id": turn.chat_id,
                "turn_id": turn.turn_id,
                "response": turn.response,
                "metadata": turn.metadata,
                "arrival": turn.arrival,
            }
        )

    def finish_turn(
        self,
        user_id: str,
        client_message_id: str,
        chat_id: str,
        control: HitlControl | None = None,
        release_chat: bool = True,
    ) -> None:
        with self._lock:
            turn = self._turns.get((user_id, client_message_id))
            record = self._chats.get((user_id, chat_id))
            if turn is None or record is None:
                return
            turn.lease_expires_at = None
            run = record.chat.run.released() if release_chat else record.chat.run
            changes: dict[str, Any] = {"run": run}
            if control is not None:
                changes["control"] = control
            record.chat = record.chat.model_copy(update=changes)

    def beat(
        self,
        user_id: str,
        client_message_id: str,
        chat_id: str,
        owner: str,
        lease_until: datetime | None = None,
    ) -> Beat:
        with self._lock:
            turn = self._turns.get((user_id, client_message_id))
            record = self._chats.get((user_id, chat_id))
            run = record.chat.run if record is not None else None
            if run is not None and run.owner not in (None, owner):
                return "lost"
            if turn is None:
                return "gone"
            if lease_until is not None:
                turn.lease_expires_at = lease_until
                if record is not None and run is not None:
                    held = run.model_copy(update={"lease_until": lease_until})
                    record.chat = record.chat.model_copy(update={"run": held})
            return "stop" if run is not None and run.stop else "go"

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
        self._let_go(user_id, client_message_id, chat_id, owner, None)

    def _let_go(
        self,
        user_id: str,
        client_message_id: str,
        chat_id: str | None,
        owner: str | None,
        now: datetime | None,
    ) -> None:
        with self._lock:
            turn = self._turns.get((user_id, client_message_id))
            if turn is not None and turn.status in ("queued", "running"):
                turn.status, turn.lease_expires_at = "failed", None
            record = self._chats.get((user_id, chat_id)) if chat_id else None
            if record is None or owner is None:
                return
            run = record.chat.run
            if now is not None and run.waits(owner):
                record.chat = record.chat.model_copy(update={"run": run.without(owner, now)})
            elif now is None and run.owner == owner:
                record.chat = record.chat.model_copy(update={"run": run.released()})

    def _create(self, user_id: str, chat_id: str, now: datetime, title: str = "") -> _ChatRecord:
        """The chat's record, created if missing (the caller holds the lock)."""
        chat = Chat(id=chat_id, user_id=user_id, created_at=now, updated_at=now, title=title)
        return self._chats.setdefault((user_id, chat_id), _ChatRecord(chat))

    @staticmethod
    def _add(record: _ChatRecord, messages: Sequence[Message], now: datetime) -> None:
        for message in messages:
            record.messages[message.id] = message
        record.message_count += len(messages)
        record.chat = record.chat.model_copy(
            update={"updated_at": now, "message_count": record.message_count}
        )


def _chat_changes(update: ChatUpdate | None) -> dict[str, Any]:
    """The Chat fields a turn's ``ChatUpdate`` changes."""
    if update is None:
        return {}
    changes: dict[str, Any] = {}
    if update.summary is not None:
        changes["summary"] = update.summary
        changes["summarized_until"] = update.summarized_until
    if update.control is not None:
        changes["control"] = update.control
    if update.title is not None:
        changes["title"] = update.title
    return changes
