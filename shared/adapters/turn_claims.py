"""The decision inside ``ConversationStore.claim_turn``, shared by every adapter.

Each adapter reads the turn record and the chat in one transaction, calls ``decide`` and
writes what it says. Keeping the rules here makes the in-memory fake and Firestore agree by
construction; the contract tests check that both store what was decided.

Exactly once: a turn id is claimed once per ``client_message_id`` (a repeat replays, a
concurrent one waits), and a waiting interrupt is taken by one claim only, because both
happen in the transaction that reads them (the loser of a race re-reads and sees
``resuming``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from shared.models.domain import Chat, ClaimStatus, HitlControl, TurnClaim
from shared.models.wire import TurnResponse
from shared.ports import ResumeClaim


@dataclass(frozen=True)
class SeenTurn:
    status: str  # running | done | failed
    chat_id: str
    turn_id: str
    lease_expires_at: datetime | None = None
    response: TurnResponse | None = None


@dataclass(frozen=True)
class ClaimRequest:
    chat_id: str
    turn_id: str
    now: datetime
    lease_seconds: int
    new_chat: bool
    resume: ResumeClaim | None


@dataclass(frozen=True)
class Decision:
    claim: TurnClaim
    write_turn: bool = False  # store the turn as running (``claim.turn_id``, ``chat_id``)
    control: HitlControl | None = None  # the chat's control record to store


def decide(seen: SeenTurn | None, chat: Chat | None, request: ClaimRequest) -> Decision:
    now = request.now
    if seen is not None and seen.status == "done":
        return Decision(_claim("done", seen.turn_id, seen.chat_id, response=seen.response))
    if seen is not None and seen.status == "running" and _alive(seen.lease_expires_at, now):
        return Decision(_claim("running", seen.turn_id, seen.chat_id))
    chat_id = seen.chat_id if seen is not None else request.chat_id  # a retry keeps its chat
    if chat is None and not request.new_chat:
        return Decision(_claim("no_chat", request.turn_id, chat_id))
    taken = _take_interrupt(chat, request)
    if isinstance(taken, TurnClaim):
        return Decision(taken)
    resumed, option_id, control = taken
    claim = _claim("new", request.turn_id, chat_id, chat=chat, option_id=option_id)
    return Decision(claim.model_copy(update={"resumed": resumed}), True, control)


def _take_interrupt(
    chat: Chat | None, request: ClaimRequest
) -> TurnClaim | tuple[bool, str | None, HitlControl | None]:
    """(resumed, option, new control), or the refusal to return instead."""
    control = chat.control if chat is not None else HitlControl()
    if request.resume is None:
        return False, None, None
    if request.resume.interrupt_id is None:
        return _take_for_message(control, request)
    interrupt, choose = control.interrupt, request.resume.choose
    if (
        interrupt is None
        or interrupt.id != request.resume.interrupt_id
        or not _answerable(control, request)
    ):
        return _claim("not_pending", request.turn_id, request.chat_id)
    option_id = choose(interrupt) if choose is not None else None
    if choose is not None and option_id is None:
        return _claim("bad_answer", request.turn_id, request.chat_id)
    return True, option_id, _claimed(control, request)


def _take_for_message(
    control: HitlControl, request: ClaimRequest
) -> TurnClaim | tuple[bool, str | None, HitlControl | None]:
    """A message may answer the chat's question: one of the turn graph (its HITL handler
    decides how), or one background work asked if the message clearly picks an option
    (``choose``); anything else runs as a new turn. Another answer running: wait."""
    interrupt = control.interrupt
    if interrupt is None:
        return False, None, None
    if not _answerable(control, request):
        if control.status == "resuming" and control.target == "turn":
            return _claim("running", control.owner or request.turn_id, request.chat_id)
        return False, None, None
    if control.target == "turn":
        return True, None, _claimed(control, request)
    choose = request.resume.choose if request.resume is not None else None
    option_id = choose(interrupt) if choose is not None else None
    if option_id is None:
        return False, None, None
    return True, option_id, _claimed(control, request)


def _answerable(control: HitlControl, request: ClaimRequest) -> bool:
    """Waiting, or claimed by this very turn in an attempt that failed (its retry)."""
    mine = control.status == "resuming" and control.owner == request.turn_id
    return control.waiting(request.now) or (mine and control.interrupt is not None)


def _claimed(control: HitlControl, request: ClaimRequest) -> HitlControl:
    lease = request.now + timedelta(seconds=request.lease_seconds)
    return control.model_copy(
        update={"status": "resuming", "owner": request.turn_id, "lease_until": lease}
    )


def _alive(lease: datetime | None, now: datetime) -> bool:
    return lease is not None and lease > now


def _claim(status: ClaimStatus, turn_id: str, chat_id: str, **more: Any) -> TurnClaim:
    return TurnClaim(status=status, turn_id=turn_id, chat_id=chat_id, **more)
