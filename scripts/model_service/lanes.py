"""Admission to an engine, interactive callers first, with deadlines.

A ``Lane`` lets at most ``slots`` callers hold it at once (for the text engine: as many
generations as llama.cpp decodes together); the others wait in arrival order, except that
a background caller (an extraction, an agent job: nobody waits for it) lets every
interactive one (a turn's reply) go first, and background callers together hold at most
``background_slots``, so that with several slots one is always left for a reply. When an
interactive caller finds no slot and a background one holds a slot, that holder is asked to
stop (``Hold.preempted``, with ``preempt``): it gives its slot back at its next token and
its caller answers that it may try again (``Preempted``), as serving systems preempt by
recomputation; so a reply waits for a token, not for a whole extraction. An interactive
generation is never cut short. A caller that is still waiting at its deadline
leaves the queue with ``QueueTimeout``; when ``max_waiting`` callers already wait, a new one
is turned away at once with ``QueueFull``. Either way it never held the engine, so the
caller can answer 429 and the client may try again later.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


class Overloaded(Exception):
    """The request was not admitted; nothing ran."""


class QueueFull(Overloaded):
    pass


class QueueTimeout(Overloaded):
    pass


class Preempted(Exception):
    """A background generation stopped to let an interactive caller go first; nothing of
    it is kept, and the caller may try again."""


@dataclass
class Hold:
    """One caller's hold on a slot. ``preempted`` is set under the lane's lock and read by
    the holder between tokens (a plain attribute: the read needs no lock)."""

    waited: float
    preemptible: bool  # a background caller that can be answered "try again"
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


class Lane:
    def __init__(
        self,
        slots: int = 1,
        max_waiting: int = 32,
        background_slots: int | None = None,
        preempt: bool = False,
    ) -> None:
        """``background_slots`` defaults to one slot fewer than ``slots`` (all of one)."""
        background_slots = max(1, slots - 1) if background_slots is None else background_slots
        if slots < 1 or max_waiting < 0 or not 1 <= background_slots <= slots:
            raise ValueError(
                "a lane needs at least one slot, a non-negative queue and 1..slots background slots"
            )
        self._slots = slots
        self._preempt = preempt
        self._holds: list[Hold] = []
        self._background_slots = background_slots
        self._max_waiting = max_waiting
        self._cond = threading.Condition()
        self._queue: deque[_Ticket] = deque()
        self._running = self._running_background = 0
        self._admitted = self._turned_away = self._peak_running = self._peak_waiting = 0
        self._preempted = 0

    @contextmanager
    def slot(
        self, deadline: float, background: bool = False, preemptible: bool = False
    ) -> Iterator[Hold]:
        """Hold one slot for the ``with`` block (``Hold.waited``: the seconds spent waiting
        for it). ``deadline`` is on the ``time.monotonic()`` clock; ``background`` callers
        wait behind every interactive one, and may be asked to stop when ``preemptible``."""
        arrived = time.monotonic()
        self._enter(deadline, background)
        hold = Hold(time.monotonic() - arrived, preemptible=background and preemptible)
        with self._cond:
            self._holds.append(hold)
        try:
            yield hold
        finally:
            with self._cond:
                self._holds.remove(hold)
                self._running -= 1
                self._running_background -= background
                self._preempted += hold.preempted
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
            )

    def _enter(self, deadline: float, background: bool) -> None:
        with self._cond:
            if self._queue or not self._room_for(background):
                self._wait_in_line(deadline, background)
            self._running += 1
            self._running_background += background
            self._admitted += 1
            self._peak_running = max(self._peak_running, self._running)

    def _wait_in_line(self, deadline: float, background: bool) -> None:
        if len(self._queue) >= self._max_waiting:
            self._turned_away += 1
            raise QueueFull(f"{len(self._queue)} requests are already waiting")
        ticket = _Ticket(background)
        self._queue.append(ticket)
        self._peak_waiting = max(self._peak_waiting, len(self._queue))
        if not background:
            self._preempt_one()
        try:
            while not (self._next() is ticket and self._room_for(background)):
                left = deadline - time.monotonic()
                if left <= 0:
                    self._turned_away += 1
                    raise QueueTimeout("the request waited past its deadline")
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
        stopping = sum(h.preempted for h in self._holds)
        if stopping >= waiting:
            return
        running = [h for h in self._holds if h.preemptible and not h.preempted]
        if running:
            running[-1].preempted = True

    def _next(self) -> _Ticket:
        """Whose turn it is: the first interactive caller, else the first background one."""
        return next((t for t in self._queue if not t.background), self._queue[0])

    def _room_for(self, background: bool) -> bool:
        if background and self._running_background >= self._background_slots:
            return False
        return self._running < self._slots


class _Ticket:
    """One waiting caller (compared by identity)."""

    __slots__ = ("background",)

    def __init__(self, background: bool) -> None:
        self.background = background
