"""The decision inside ``ConversationStore.claim_turn``, shared by every adapter.

Each adapter reads the turn record and the chat in one transaction, calls ``decide`` and
writes what it says. Keeping the rules here makes the in-memory fake and Firestore agree by
construction; the contract tests check that both store what was decided.

Exactly once: a turn id is claimed once per ``client_message_id`` (a repeat replays, a
concurrent one waits), and a waiting interrupt is taken by one claim only, because both
happen in the transaction that reads them (the loser of a race re-reads and sees
``resuming``).

One turn at a time per chat (``ChatRun``): a claim that finds the chat held by another live
turn, or other turns waiting before it, does not start. With ``enqueue`` it joins the queue
(its turn record says ``queued``) and claims again once the chat is free for it; with
``interrupt`` it joins at the front and asks the holder to stop; with ``reject`` it is
``busy`` and writes nothing. The claim that starts takes the chat (holder, lease) and its
place in the queue is dropped. The queue's order is the order of the claims' commits on the
chat document: the order of arrival.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from shared.models.domain import Chat, ChatRun, ClaimStatus, HitlControl, TurnClaim, Waiting
from shared.models.wire import MultitaskStrategy, TurnResponse
from shared.ports import ResumeClaim


@dataclass(frozen=True)
class SeenTurn:
    status: str  # queued | running | done | failed
    chat_id: str
    turn_id: str
    lease_expires_at: datetime | None = None
    response: TurnResponse | None = None
    owner: str | None = None  # the request that claimed it


@dataclass(frozen=True)
class ClaimRequest:
    chat_id: str
    turn_id: str
    now: datetime
    lease_seconds: int
    new_chat: bool
    resume: ResumeClaim | None
    owner: str = ""  # this request (attempt); its own queued claim is not a rival
    strategy: MultitaskStrategy = "enqueue"
    wait_seconds: float = 30.0  # how long a queued claim may wait for the chat

    @property
    def lease_until(self) -> datetime:
        return self.now + timedelta(seconds=self.lease_seconds)

    @property
    def wait_until(self) -> datetime:
        return self.now + timedelta(seconds=self.wait_seconds)


@dataclass(frozen=True)
class Decision:
    claim: TurnClaim
    write_turn: bool = False  # store the turn (``claim.turn_id``, ``chat_id``) as ``status``
    control: HitlControl | None = None  # the chat's control record to store
    run: ChatRun | None = None  # the chat's run record to store
    status: str = "running"  # running, or queued (until the request's wait ends)

    @property
    def quiet(self) -> bool:
        """Writes nothing: a loser of a race may learn it from a plain read."""
        return not self.write_turn and self.control is None and self.run is None

    def lease_until(self, request: ClaimRequest) -> datetime:
        return request.wait_until if self.status == "queued" else request.lease_until


def decide(seen: SeenTurn | None, chat: Chat | None, request: ClaimRequest) -> Decision:
    now = request.now
    earlier = _earlier(seen, request)
    if earlier is not None:
        return earlier
    chat_id = seen.chat_id if seen is not None else request.chat_id  # a retry keeps its chat
    if chat is None and not request.new_chat:
        return Decision(_claim("no_chat", request.turn_id, chat_id))
    run = chat.run if chat is not None else None
    if run is not None and not run.free_for(request.owner, now):
        return _wait(run, request, chat_id)
    taken = _take_interrupt(chat, request)
    if isinstance(taken, TurnClaim):  # refused: it no longer waits for the chat either
        left = run.without(request.owner, now) if run and run.waits(request.owner) else None
        return Decision(taken, run=left)
    resumed, option_id, control = taken
    claim = _claim("new", request.turn_id, chat_id, chat=chat, option_id=option_id)
    claim = claim.model_copy(update={"resumed": resumed})
    if run is None:  # a new chat: nobody else knows it yet
        return Decision(claim, True, control)
    held, arrival = _hold(run, request)
    return Decision(claim.model_copy(update={"arrival": arrival}), True, control, held)


def erasing(request: ClaimRequest) -> Decision:
    """The account is being erased: nothing starts (nothing is written)."""
    return Decision(_claim("erased", request.turn_id, request.chat_id))


def _earlier(seen: SeenTurn | None, request: ClaimRequest) -> Decision | None:
    """The same ``client_message_id`` claimed before: its replay, or it still runs (or
    waits, for another request than this one)."""
    if seen is None:
        return None
    if seen.status == "done":
        return Decision(_claim("done", seen.turn_id, seen.chat_id, response=seen.response))
    live = seen.status in ("running", "queued") and _alive(seen.lease_expires_at, request.now)
    if live and (seen.status == "running" or seen.owner != request.owner):
        return Decision(_claim("running", seen.turn_id, seen.chat_id))
    return None


def _hold(run: ChatRun, request: ClaimRequest) -> tuple[ChatRun, int]:
    mine = next((w for w in run.queue if w.owner == request.owner), None)
    arrival = mine.arrival if mine else run.arrivals + 1
    held = run.without(request.owner, request.now).model_copy(
        update={
            "turn_id": request.turn_id,
            "owner": request.owner,
            "lease_until": request.lease_until,
            "stop": False,
            "arrivals": max(run.arrivals, arrival),
        }
    )
    return held, arrival


def _wait(run: ChatRun, request: ClaimRequest, chat_id: str) -> Decision:
    """The chat is not free for this claim: refuse (``reject``) or wait in its queue."""
    if request.strategy == "reject":
        return Decision(_claim("busy", request.turn_id, chat_id))
    mine = next((w for w in run.queue if w.owner == request.owner), None)
    if mine is not None:  # waits already: nothing changes
        return Decision(_claim("queued", request.turn_id, chat_id, arrival=mine.arrival))
    waiting = Waiting(
        turn_id=request.turn_id,
        owner=request.owner,
        arrival=run.arrivals + 1,
        until=request.wait_until,
    )
    queue = [w for w in run.queue if w.until > request.now]
    interrupt = request.strategy == "interrupt"
    queue = [waiting, *queue] if interrupt else [*queue, waiting]
    changed = {"queue": queue, "arrivals": waiting.arrival, "stop": run.stop or interrupt}
    claim = _claim("queued", request.turn_id, chat_id, arrival=waiting.arrival)
    return Decision(claim, True, run=run.model_copy(update=changed), status="queued")


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
