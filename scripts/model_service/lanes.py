"""Admission to an engine, interactive callers first, shortest first, with deadlines.

A ``Lane`` lets at most ``slots`` callers hold it at once (for the text engine: as many
generations as llama.cpp decodes together). Waiting callers are ordered by ``_key``: every
interactive one (a turn's reply) before every background one (an extraction, an agent job:
nobody waits for it); within a kind, first the callers that have waited ``aging`` seconds
(arrival order: nobody starves), then the fewest slices already run, then the smallest
``size`` (the work the caller announces: a capped short reply before an uncapped one or a
long prompt), then arrival. Background callers together hold at most ``background_slots``,
so that with several slots one is always left for a reply.

A holder can be asked to give its slot back at its next token (``Hold.preempted``):
- a background holder, when an interactive caller finds no slot (``preempt``): its caller
  answers that it may try again (``Preempted``), as serving systems preempt by
  recomputation; so a reply waits for a token, not for a whole extraction;
- a ``resumable`` interactive holder (a free-text reply, which the service can continue from
  its text so far), once its slice has produced ``slice_tokens`` (``Hold.tokens``) and the
  caller next in line would go before it: it pauses and queues again one slice further on.
  Replies of unknown length then share the engine by turns, as a round-robin scheduler
  shares a CPU: a short reply waits for one slice of a long one, not for all of it.
Any other interactive generation is never cut short. A caller that is still waiting at its
deadline leaves the queue with ``QueueTimeout``; when ``max_waiting`` callers already wait,
a new one is turned away at once with ``QueueFull``. Either way it never held the engine,
so the caller can answer 429 and the client may try again later.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

Clock = Callable[[], float]
_POLL = 0.01  # how often a waiter looks again at a slice that is not over yet (~1 token)


class Overloaded(Exception):
    """The request was not admitted; nothing ran."""


class QueueFull(Overloaded):
    pass


class QueueTimeout(Overloaded):
    pass


class Preempted(Exception):
    """A background generation stopped to let an interactive caller go first; nothing of
    it is kept, and the caller may try again."""


@dataclass(frozen=True)
class Place:
    """Where a caller stands in line: what it announces (``size``), how many slices it ran
    before (``level``), when it first arrived (kept across slices, for ``aging``)."""

    size: int = 0
    level: int = 0
    arrived: float | None = None  # None: now


@dataclass
class Hold:
    """One caller's hold on a slot. ``preempted`` is set under the lane's lock and read by
    the holder between tokens (a plain attribute: the read needs no lock)."""

    waited: float
    preemptible: bool  # a background caller that can be answered "try again"
    resumable: bool = False  # an interactive caller that can pause and queue again
    place: Place = field(default_factory=Place)
    tokens: int = 0  # produced in this slice (counted by the holder)
    preempted: bool = False


@dataclass(frozen=True)
class LaneStats:
    running: int
    running_background: int  # of ``running``
    waiting: int
    waiting_background: int  # of ``waiting``
    admitted: int
    turned_away: int
    peak_running: int
    peak_waiting: int
    preempted: int  # background holds asked to stop for an interactive caller
    paused: int  # interactive slices ended for a caller next in line


class Lane:
    def __init__(
        self,
        slots: int = 1,
        max_waiting: int = 32,
        background_slots: int | None = None,
        preempt: bool = False,
        slice_tokens: int = 0,
        aging: float = 5.0,
        clock: Clock = time.monotonic,
    ) -> None:
        """``background_slots`` defaults to one slot fewer than ``slots`` (all of one);
        ``slice_tokens`` 0 lets every interactive holder run to its end."""
        background_slots = max(1, slots - 1) if background_slots is None else background_slots
        if slots < 1 or max_waiting < 0 or not 1 <= background_slots <= slots:
            raise ValueError(
                "a lane needs at least one slot, a non-negative queue and 1..slots background slots"
            )
        self._slots = slots
        self._preempt = preempt
        self._slice = slice_tokens
        self._aging = aging
        self._clock = clock
        self._holds: list[Hold] = []
        self._background_slots = background_slots
        self._max_waiting = max_waiting
        self._cond = threading.Condition()
        self._queue: list[_Ticket] = []
        self._running = self._running_background = 0
        self._admitted = self._turned_away = self._peak_running = self._peak_waiting = 0
        self._preempted = self._paused = 0

    @contextmanager
    def slot(
        self,
        deadline: float,
        background: bool = False,
        preemptible: bool = False,
        place: Place = Place(),
        resumable: bool = False,
    ) -> Iterator[Hold]:
        """Hold one slot for the ``with`` block (``Hold.waited``: the seconds spent waiting
        for it). ``deadline`` is on the lane's clock (``time.monotonic()``); ``background``
        callers wait behind every interactive one, and may be asked to stop when
        ``preemptible``; interactive ``resumable`` ones may be asked to pause."""
        arrived = self._clock()
        place = place if place.arrived is not None else Place(place.size, place.level, arrived)
        self._enter(deadline, _Ticket(background, place))
        hold = Hold(
            self._clock() - arrived,
            preemptible=background and preemptible,
            resumable=resumable and not background,
            place=place,
        )
        with self._cond:
            self._holds.append(hold)
        try:
            yield hold
        finally:
            with self._cond:
                self._holds.remove(hold)
                self._running -= 1
                self._running_background -= background
                self._preempted += hold.preempted and hold.preemptible
                self._paused += hold.preempted and hold.resumable
                self._cond.notify_all()

    def stats(self) -> LaneStats:
        with self._cond:
            return LaneStats(
                running=self._running,
                running_background=self._running_background,
                waiting=len(self._queue),
                waiting_background=sum(t.background for t in self._queue),
                admitted=self._admitted,
                turned_away=self._turned_away,
                peak_running=self._peak_running,
                peak_waiting=self._peak_waiting,
                preempted=self._preempted,
                paused=self._paused,
            )

    def _enter(self, deadline: float, ticket: _Ticket) -> None:
        with self._cond:
            if self._queue or not self._room_for(ticket.background):
                self._wait_in_line(deadline, ticket)
            self._running += 1
            self._running_background += ticket.background
            self._admitted += 1
            self._peak_running = max(self._peak_running, self._running)

    def _wait_in_line(self, deadline: float, ticket: _Ticket) -> None:
        if len(self._queue) >= self._max_waiting:
            self._turned_away += 1
            raise QueueFull(f"{len(self._queue)} requests are already waiting")
        self._queue.append(ticket)
        self._peak_waiting = max(self._peak_waiting, len(self._queue))
        if not ticket.background:
            self._preempt_one()
        try:
            while not (self._next() is ticket and self._room_for(ticket.background)):
                left = deadline - self._clock()
                if left <= 0:
                    self._turned_away += 1
                    raise QueueTimeout("the request waited past its deadline")
                if self._next() is ticket and self._pause_one(ticket):
                    left = min(left, _POLL)  # a slice ends later: look again then
                self._cond.wait(left)
        finally:
            self._queue.remove(ticket)
            self._cond.notify_all()  # whoever is next in line may go now

    def _preempt_one(self) -> None:
        """Ask the latest background holder (the least work lost) to stop, unless one
        already stops for an interactive caller waiting before this one."""
        if not self._preempt or self._room_for(False):
            return
        waiting = sum(not t.background for t in self._queue)
        stopping = sum(h.preempted for h in self._holds if h.preemptible)
        if stopping >= waiting:
            return
        running = [h for h in self._holds if h.preemptible and not h.preempted]
        if running:
            running[-1].preempted = True

    def _pause_one(self, ticket: _Ticket) -> bool:
        """For the caller next in line: ask a resumable holder whose slice is over, and
        that would queue again behind this caller, to pause. True while one such holder's
        slice is not over yet (the caller should look again soon)."""
        if self._slice <= 0 or ticket.background or any(h.preempted for h in self._holds):
            return False
        now = self._clock()
        later = False
        for hold in self._holds:
            after = _Ticket(False, Place(hold.place.size, hold.place.level + 1, hold.place.arrived))
            if not hold.resumable or not self._key(ticket, now) < self._key(after, now):
                continue
            if hold.tokens >= self._slice:
                hold.preempted = True
                return False
            later = True
        return later

    def _next(self) -> _Ticket:
        """Whose turn it is: the first interactive caller by ``_key``, else the first
        background one."""
        now = self._clock()
        interactive = [t for t in self._queue if not t.background]
        return min(interactive or self._queue, key=lambda t: self._key(t, now))

    def _key(self, ticket: _Ticket, now: float) -> tuple[int, int, int, float]:
        arrived = ticket.place.arrived or 0.0
        if now - arrived >= self._aging:
            return (0, 0, 0, arrived)  # waited long enough: arrival order, before the rest
        return (1, ticket.place.level, ticket.place.size, arrived)

    def _room_for(self, background: bool) -> bool:
        if background and self._running_background >= self._background_slots:
            return False
        return self._running < self._slots


class _Ticket:
    """One waiting caller (compared by identity)."""

    __slots__ = ("background", "place")

    def __init__(self, background: bool, place: Place) -> None:
        self.background = background
        self.place = place
