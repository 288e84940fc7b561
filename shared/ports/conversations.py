"""The conversation store: chats, messages and each turn's record, claim and outbox (Firestore)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

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
from shared.models.wire import Interrupt, MultitaskStrategy, TurnResponse
from shared.ports.infra import Keyset


@dataclass(frozen=True)
class MessagePage:
    """Which messages of a chat a page holds: ``limit`` of them in ``(created_at, id)``
    order (newest first with ``newest_first``), created after ``since`` if given, past
    ``after`` (the position of the previous page's last message)."""

    limit: int
    since: datetime | None = None
    after: Keyset | None = None
    newest_first: bool = False


class ConversationStore(Protocol):
    """Chats, messages and per-turn idempotency records (Firestore)."""

    def get_chat(self, user_id: str, chat_id: str) -> Chat | None: ...

    def create_chat(self, user_id: str, chat_id: str, now: datetime, title: str = "") -> Chat:
        """Create the chat, or answer the one already stored under this id (a retry)."""
        ...

    def retitle(
        self, user_id: str, chat_id: str, title: str, check: Callable[[Chat], None]
    ) -> Chat | None:
        """Set the chat's title in one transaction, after ``check`` accepted the chat as read
        (it raises to refuse: nothing is written); None when there is no such chat."""
        ...

    def recent_messages(
        self, user_id: str, chat_id: str, limit: int, after: datetime | None = None
    ) -> list[Message]:
        """The newest ``limit`` messages created after ``after``, oldest first."""
        ...

    def list_chats(self, user_id: str, limit: int, after: Keyset | None = None) -> list[Chat]:
        """The user's ``limit`` most recently updated chats, most recent first (by
        ``(updated_at, id)`` descending); ``after``: only those past that position."""
        ...

    def list_messages(self, user_id: str, chat_id: str, page: MessagePage) -> list[Message]:
        """One page of the chat's messages in ``(created_at, id)`` order (``page``)."""
        ...

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
        """Atomically start a turn, or report the earlier one with the same client id.

        In the same transaction the chat is read (``no_chat`` if it must exist and does
        not) and, with ``resume``, its waiting interrupt is claimed for this turn; a chat
        held by another turn makes it wait (``queued``, for ``wait_seconds`` at most) or
        refuses it (``busy``), by ``strategy``. ``owner`` names the request: claiming again
        after waiting continues its own queued claim (see
        ``shared.adapters.turn_claims.decide``, shared by every adapter)."""
        ...

    def open_interrupt(
        self, user_id: str, chat_id: str, control: HitlControl, question: Message, now: datetime
    ) -> bool:
        """Make ``control`` the chat's pending interrupt and post its question, in one
        transaction; False (nothing written) if another interrupt is waiting."""
        ...

    def put_control(self, user_id: str, chat_id: str, control: HitlControl) -> bool:
        """Make ``control`` the chat's control record (one write, no read): how a turn that
        asked leaves its question pending, once its checkpoint is saved. False if the chat
        is gone."""
        ...

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
        """Write the turn's messages, its recorded response and metadata, and the chat's
        update (or creation, for ``new_chat``) in one commit. ``outbox``: handoffs a queue
        could not take, kept on the turn record (the turn joins ``Chat.outbox``) until
        ``settle_outbox``. ``finish``: the run ends with this commit (``finish_turn`` in
        it). Raises ``Conflict`` when the turn record is gone (an erased account)."""
        ...

    def finish_turn(
        self,
        user_id: str,
        client_message_id: str,
        chat_id: str,
        control: HitlControl | None = None,
        release_chat: bool = True,
    ) -> None:
        """The run has ended, its checkpoint saved: the turn's lease and (unless it lost
        it) the chat are released, with ``control`` (a question left waiting) stored, in
        one commit. Nothing happens for an erased account."""
        ...

    def beat(
        self,
        user_id: str,
        client_message_id: str,
        chat_id: str,
        owner: str,
        lease_until: datetime | None = None,
    ) -> Beat:
        """While a turn runs: ``stop`` when an interrupting turn asks it to, ``lost`` when
        another turn holds its chat (its lease ran out), ``gone`` when its record is gone,
        else ``go``. With ``lease_until``, its lease and the chat's move on to it."""
        ...

    def leave_queue(
        self, user_id: str, client_message_id: str, chat_id: str, owner: str, now: datetime
    ) -> None:
        """A queued turn stops waiting: out of its chat's queue, its record failed (so the
        client may send it again)."""
        ...

    def outbox(self, user_id: str, client_message_id: str) -> list[Handoff]:
        """The handoffs the turn still has to send (none for an unknown turn)."""
        ...

    def settle_outbox(
        self, user_id: str, chat_id: str, client_message_id: str, remaining: Sequence[Handoff]
    ) -> None:
        """Keep only ``remaining`` in the turn's outbox; with none left the turn leaves its
        chat's outbox."""
        ...

    def turns_with_outbox(self, limit: int) -> list[OutboxEntry]:
        """Turns of any user whose outbox holds handoffs (the scheduled drain reads them)."""
        ...

    def get_turn(self, user_id: str, client_message_id: str) -> TurnRecord | None: ...

    def release_turn(
        self,
        user_id: str,
        client_message_id: str,
        chat_id: str | None = None,
        owner: str | None = None,
    ) -> None:
        """Forget a failed turn so the client may retry it with the same id (a completed
        one stays completed); the chat it held (``chat_id``, ``owner``) is free again."""
        ...

    def append_message(self, user_id: str, chat_id: str, message: Message) -> bool:
        """Add a message whose id is its idempotency key; False if it already existed."""
        ...


Beat = Literal["go", "stop", "lost", "gone"]


@dataclass(frozen=True)
class OutboxEntry:
    user_id: str
    chat_id: str
    client_message_id: str


@dataclass(frozen=True)
class ResumeClaim:
    """Take the chat's waiting interrupt together with the turn's claim.

    ``interrupt_id``: exactly this interrupt (``functions/resume``), else ``not_pending``;
    None: whatever question waits (a message that may answer it; none is no error): a
    question of the turn graph always, one of background work if ``choose`` picks an option.
    ``choose`` picks the answer's option from the interrupt, inside the transaction; None
    from it means the answer picks nothing (``bad_answer``, nothing written)."""

    interrupt_id: str | None = None
    choose: Callable[[Interrupt], str | None] | None = None
