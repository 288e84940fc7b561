"""Admission to an engine: one at a time or a few slots, interactive first, then first come
first served, background callers kept off the last slot, deadlines, a queue cap."""

from __future__ import annotations

import threading
import time

import pytest

from scripts.model_service.__main__ import parse_args
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


def test_background_callers_leave_the_last_slot_to_an_interactive_one() -> None:
    lane, order = Lane(slots=2), []  # background callers may hold one slot of two
    second_in = threading.Event()

    def second_background() -> None:
        with lane.slot(far(), background=True):
            order.append("bg2")
            second_in.set()

    with lane.slot(far(), background=True):
        waiter = threading.Thread(target=second_background)
        waiter.start()
        while lane.stats().waiting < 1:
            time.sleep(0.001)
        assert not second_in.wait(0.05)  # a slot is free, but not for a background caller
        with lane.slot(time.monotonic()):  # an interactive caller gets it at once
            order.append("turn")
            assert (lane.stats().running, lane.stats().running_background) == (2, 1)
        assert not second_in.is_set()
    waiter.join(5)

    assert order == ["turn", "bg2"]
    assert lane.stats().peak_running == 2


def test_two_generations_with_a_background_one_beside_them() -> None:
    lane = Lane(slots=3, max_waiting=0, background_slots=1)

    with lane.slot(far()), lane.slot(far(), background=True), lane.slot(far()):
        assert (lane.stats().running, lane.stats().running_background) == (3, 1)
    # its one background slot is taken: a second background caller would have to wait
    with lane.slot(far(), background=True), pytest.raises(QueueFull), lane.slot(far(), True):
        pass


def test_one_slot_is_shared_by_both_kinds_and_bad_shapes_are_refused() -> None:
    lane = Lane(slots=1)
    with lane.slot(far(), background=True):  # the only slot: background may take it
        assert lane.stats().running_background == 1
    for slots, background_slots in ((2, 0), (2, 3), (0, None)):
        with pytest.raises(ValueError):
            Lane(slots=slots, background_slots=background_slots)


def test_the_command_line_refuses_slots_it_cannot_give(capsys: pytest.CaptureFixture[str]) -> None:
    required = ["--port", "1", "--token-file", "token"]
    for wrong in (["--parallel", "0"], ["--parallel", "2", "--background-slots", "3"]):
        with pytest.raises(SystemExit):
            parse_args(required + wrong)
        assert "--background-slots within 1..--parallel" in capsys.readouterr().err

    args = parse_args([*required, "--parallel", "4", "--background-slots", "2"])
    assert (parse_args(required).parallel, args.parallel, args.background_slots) == (1, 4, 2)


def test_a_client_timeout_shortens_both_deadlines() -> None:
    limits = Limits(max_generation_seconds=20, max_queue_seconds=30)

    own = Budget.starting(100.0, None, limits)
    short = Budget.starting(100.0, "10", limits)
    garbled = Budget.starting(100.0, "soon", limits)

    assert (own.queue, own.generation(105.0)) == (130.0, 125.0)
    assert short.queue == short.generation(105.0) == pytest.approx(109.0)  # 90 % of 10 s
    assert garbled == own
