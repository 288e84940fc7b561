"""Admission to an engine: one at a time, interactive first, then first come first served,
deadlines, a queue cap."""

from __future__ import annotations

import threading
import time

import pytest

from scripts.model_service.lanes import Lane, QueueFull, QueueTimeout
from scripts.model_service.service import Budget, Limits


def far() -> float:
    return time.monotonic() + 30


def test_waiters_are_admitted_in_arrival_order_one_at_a_time() -> None:
    lane, order, running = Lane(slots=1), [], []

    def worker(n: int) -> None:
        with lane.slot(far()):
            running.append(lane.stats().running)
            order.append(n)

    with lane.slot(far()):
        threads = []
        for n in range(5):
            threads.append(threading.Thread(target=worker, args=(n,)))
            threads[-1].start()
            while lane.stats().waiting < n + 1:  # n is in line before n + 1 arrives
                time.sleep(0.001)
    for thread in threads:
        thread.join(5)

    assert order == [0, 1, 2, 3, 4]
    assert running == [1] * 5
    stats = lane.stats()
    assert (stats.admitted, stats.peak_running, stats.peak_waiting) == (6, 1, 5)


def test_interactive_callers_go_before_waiting_background_ones() -> None:
    """A reply never queues behind another turn's extraction; among each kind, arrival
    order; the running holder is not cut short."""
    lane, order = Lane(slots=1), []

    def worker(name: str, background: bool) -> None:
        with lane.slot(far(), background):
            order.append(name)

    arrivals = [("bg1", True), ("bg2", True), ("turn1", False), ("bg3", True), ("turn2", False)]
    with lane.slot(far(), background=True):
        threads = []
        for n, (name, background) in enumerate(arrivals):
            threads.append(threading.Thread(target=worker, args=(name, background)))
            threads[-1].start()
            while lane.stats().waiting < n + 1:
                time.sleep(0.001)
        assert lane.stats().waiting_background == 3
    for thread in threads:
        thread.join(5)

    assert order == ["turn1", "turn2", "bg1", "bg2", "bg3"]


def test_a_full_queue_turns_a_newcomer_away_at_once() -> None:
    lane = Lane(slots=1, max_waiting=0)

    with lane.slot(far()), pytest.raises(QueueFull), lane.slot(far()):
        pass
    with lane.slot(far()):  # free again: admitted
        assert lane.stats().running == 1
    assert lane.stats().turned_away == 1


def test_a_waiter_leaves_at_its_deadline_and_the_line_moves_on() -> None:
    lane = Lane(slots=1)
    with lane.slot(far()):
        with pytest.raises(QueueTimeout), lane.slot(time.monotonic() + 0.02):
            pass
        assert lane.stats().waiting == 0
    with lane.slot(time.monotonic()):  # a free lane admits even at the deadline
        pass
    assert (lane.stats().admitted, lane.stats().turned_away) == (2, 1)


def test_two_slots_admit_two_holders() -> None:
    lane = Lane(slots=2, max_waiting=0)

    with lane.slot(far()), lane.slot(far()):
        assert lane.stats().running == 2
        with pytest.raises(QueueFull), lane.slot(far()):
            pass


def test_a_client_timeout_shortens_both_deadlines() -> None:
    limits = Limits(max_generation_seconds=20, max_queue_seconds=30)

    own = Budget.starting(100.0, None, limits)
    short = Budget.starting(100.0, "10", limits)
    garbled = Budget.starting(100.0, "soon", limits)

    assert (own.queue, own.generation(105.0)) == (130.0, 125.0)
    assert short.queue == short.generation(105.0) == pytest.approx(109.0)  # 90 % of 10 s
    assert garbled == own
