"""Who goes next on the text lane: interactive before background, then whoever has waited
``aging`` seconds (arrival order), then the fewest slices run, then the smallest announced
size; and when a resumable reply is asked to pause for the caller next in line.

The lane's clock is moved by hand; threads only wait in line, and every assert is about
order, never about how long anything took."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from scripts.model_service.lanes import Hold, Lane, Place


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


FAR = 1e9  # no deadline in these tests: the clock is moved by hand


def until(condition: Callable[[], bool]) -> None:
    """Wait (a bounded while) for another thread to reach a state; fails if it never does."""
    deadline = time.monotonic() + 5
    while not condition():
        assert time.monotonic() < deadline, "the other thread never got there"
        time.sleep(0.001)


def queue_up(
    lane: Lane, callers: list[tuple[str, bool, Place]], order: list[str]
) -> list[threading.Thread]:
    """Start one thread per caller, each in line before the next arrives."""
    threads = []
    for n, (name, background, place) in enumerate(callers):

        def enter(name: str = name, background: bool = background, place: Place = place) -> None:
            with lane.slot(FAR, background, place=place):
                order.append(name)

        threads.append(threading.Thread(target=enter))
        threads[-1].start()
        until(lambda n=n: lane.stats().waiting == n + 1)
    return threads


def admitted_in_order(
    lane: Lane, callers: list[tuple[str, bool, Place]], clock: Clock, wait: float = 0.0
) -> list[str]:
    """Callers queue behind a holder; ``wait`` seconds pass; the holder leaves."""
    order: list[str] = []
    with lane.slot(FAR):
        threads = queue_up(lane, callers, order)
        clock.now += wait
    for thread in threads:
        thread.join(5)
    return order


def test_a_capped_short_reply_goes_before_a_long_one_that_came_first() -> None:
    clock = Clock()
    lane = Lane(clock=clock)
    callers = [
        ("agent reply, 384 tokens", False, Place(size=384)),
        ("extraction", True, Place(size=50)),
        ("free reply, 96 tokens", False, Place(size=96)),
        ("long prompt, 96 tokens", False, Place(size=96 + 200)),
        ("second free reply", False, Place(size=96)),
    ]

    order = admitted_in_order(lane, callers, clock)

    assert order == [
        "free reply, 96 tokens",
        "second free reply",  # equal sizes: arrival order
        "long prompt, 96 tokens",
        "agent reply, 384 tokens",
        "extraction",  # background after every interactive caller, whatever its size
    ]


def test_a_reply_that_already_ran_a_slice_goes_after_fresh_ones() -> None:
    clock = Clock()
    lane = Lane(clock=clock)
    callers = [
        ("paused once", False, Place(size=10, level=1, arrived=clock.now)),
        ("fresh, long", False, Place(size=384)),
        ("paused twice", False, Place(size=10, level=2, arrived=clock.now)),
    ]

    assert admitted_in_order(lane, callers, clock) == ["fresh, long", "paused once", "paused twice"]


@pytest.mark.parametrize(
    ("wait", "expected"),
    [
        # 1.5 s later both old ones have waited 5 s or more: they go first, the older first.
        (1.5, ["old paused reply", "old long reply", "new short reply"]),
        # before their aging time, the same callers go by slices run, then size
        (0.1, ["new short reply", "old paused reply", "old long reply"]),
    ],
)
def test_a_caller_that_waited_its_aging_time_goes_first_in_arrival_order(
    wait: float, expected: list[str]
) -> None:
    clock = Clock()
    lane = Lane(aging=5.0, clock=clock)
    callers = [
        ("old long reply", False, Place(size=384, level=3, arrived=clock.now - 4.0)),
        ("old paused reply", False, Place(size=384, level=1, arrived=clock.now - 4.5)),
        ("new short reply", False, Place(size=10)),
    ]

    assert admitted_in_order(lane, callers, clock, wait=wait) == expected


def holding(lane: Lane, resumable: bool) -> tuple[Hold, threading.Event, threading.Thread]:
    """A holder in another thread, until the returned event is set."""
    held: list[Hold] = []
    leave = threading.Event()

    def hold() -> None:
        with lane.slot(FAR, resumable=resumable) as h:
            held.append(h)
            leave.wait(5)

    thread = threading.Thread(target=hold)
    thread.start()
    until(lambda: bool(held))
    return held[0], leave, thread


@pytest.mark.parametrize(
    ("resumable", "tokens", "waiting", "paused"),
    [
        (True, 24, Place(), True),  # its slice is over, a fresh reply waits: it pauses
        (True, 23, Place(), False),  # its slice is not over yet
        (False, 500, Place(), False),  # a structured or streamed-to-the-end call is never cut
        (True, 24, Place(level=1), False),  # the waiter ran a slice too: it would go after it
    ],
)
def test_who_is_asked_to_pause(resumable: bool, tokens: int, waiting: Place, paused: bool) -> None:
    clock = Clock()
    lane = Lane(slice_tokens=24, clock=clock)
    hold, leave, thread = holding(lane, resumable)
    hold.tokens = tokens
    place = Place(waiting.size, waiting.level, clock.now if waiting.level else None)
    entering = threading.Thread(target=lambda: _enter_and_leave(lane, place), daemon=True)
    entering.start()
    until(lambda: lane.stats().waiting == 1)
    # The waiter looks again every few milliseconds: give it a few looks.
    for _ in range(20):
        time.sleep(0.005)
        if hold.preempted:
            break
    assert hold.preempted is paused
    leave.set()
    thread.join(5)
    entering.join(5)
    assert lane.stats().paused == int(paused)


def test_a_slice_ends_when_it_reaches_its_tokens_not_before() -> None:
    clock = Clock()
    lane = Lane(slice_tokens=24, clock=clock)
    hold, leave, thread = holding(lane, resumable=True)
    entering = threading.Thread(target=lambda: _enter_and_leave(lane, Place()), daemon=True)
    entering.start()
    until(lambda: lane.stats().waiting == 1)
    assert not hold.preempted

    hold.tokens = 24  # the holder counts its tokens; the waiter notices on its next look

    until(lambda: hold.preempted)
    leave.set()
    thread.join(5)
    entering.join(5)


def test_no_slices_when_slicing_is_off() -> None:
    lane = Lane(slice_tokens=0)
    hold, leave, thread = holding(lane, resumable=True)
    hold.tokens = 10_000
    entering = threading.Thread(target=lambda: _enter_and_leave(lane, Place()), daemon=True)
    entering.start()
    until(lambda: lane.stats().waiting == 1)
    time.sleep(0.05)
    assert not hold.preempted
    leave.set()
    thread.join(5)
    entering.join(5)


def _enter_and_leave(lane: Lane, place: Place) -> None:
    with lane.slot(FAR, place=place):
        pass
