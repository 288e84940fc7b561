"""One generation on the text lane, in slices when it can be resumed.

A free-text reply (interactive, no schema, no JSON mode) may be asked to pause between two
tokens for a caller that goes before it (``lanes``); it then queues again and, once admitted,
the engine continues the same answer from its text so far (``ChatCall.prefill``: llama.cpp
appends it to the prompt as the assistant's turn, and its prompt cache still holds most of
it). The caller sees one answer, its pieces in order, its cap and its time limit counted
over all slices. Structured output cannot resume (its grammar starts from the first
character), nor can a background call, which is preempted instead (answered "try again").
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from scripts.model_service.calls import ChatCall, OnText, Outcome, TextEngine
from scripts.model_service.lanes import Hold, Lane, Overloaded, Place

# Told each slice's outcome, its hold and the seconds it ran.
Record = Callable[[Outcome, Hold, float], None]


@dataclass(frozen=True)
class Deadlines:
    queue: float  # give up waiting for the first slice (monotonic clock)
    generation_seconds: float  # running time allowed over all slices
    client: float  # the client's own timeout (inf if it gave none)
    requeue_seconds: float  # how long a paused reply may wait for its next slice


@dataclass(frozen=True)
class Ran:
    outcome: Outcome  # over all slices: the first prompt, every output token, the last finish
    hold: Hold  # the last slice's
    cap_seconds: float  # the running time it was allowed (the client's timeout included)


def resumable(call: ChatCall, background: bool) -> bool:
    return not background and call.schema is None and not call.json_mode


def size_of(call: ChatCall) -> int:
    """The work a call announces, in output tokens: its cap, and its prompt (about four
    characters a token) at half, since llama.cpp evaluated a prompt it had not cached at
    about twice its decoding speed on one thread (~250 against ~120 tokens/s)."""
    characters = len(call.system) + sum(len(text) for _, text in call.messages)
    return call.max_tokens + characters // 8


def run(
    lane: Lane,
    engine: TextEngine,
    call: ChatCall,
    deadlines: Deadlines,
    background: bool,
    preemptible: bool,
    on_text: OnText,
    record: Record,
) -> Ran:
    """``on_text`` as the engine's (False: the client has gone, stop); a preempted
    background call returns with ``hold.preempted`` set and finish ``cancelled``."""
    pieces: list[str] = []
    holds: list[Hold] = []
    gone = False

    def keep(text: str) -> bool:
        nonlocal gone
        pieces.append(text)
        holds[-1].tokens += 1  # a piece is a token (llama.cpp streams one at a time)
        if not on_text(text):
            gone = True
            return False
        return not holds[-1].preempted

    can_resume = resumable(call, background)
    place, queue_deadline = Place(size_of(call)), deadlines.queue
    ran, took, produced, first, cap = 0.0, 0.0, 0, None, deadlines.generation_seconds
    while True:
        sliced = replace(call, prefill="".join(pieces), max_tokens=call.max_tokens - produced)
        try:
            with lane.slot(queue_deadline, background, preemptible, place, can_resume) as hold:
                holds.append(hold)
                started = time.monotonic()
                deadline = min(started + deadlines.generation_seconds - ran, deadlines.client)
                cap = cap if first else deadline - started
                outcome = engine.chat(sliced, deadline, keep)
                took = time.monotonic() - started
                ran += took
        except Overloaded:
            if first is None:
                raise  # never admitted: the client may try again
            outcome, took = Outcome("deadline", 0, 0), 0.0  # a paused reply ends with what it has
            hold = holds[-1]
        record(outcome, hold, took)
        first = first or outcome
        paused = hold.preempted and hold.resumable and outcome.finish == "cancelled" and not gone
        if not paused:
            produced += outcome.output_tokens
            break
        produced += hold.tokens  # the token it stopped on was kept, and sent: count it
        if produced >= call.max_tokens:
            outcome = Outcome("length", 0, 0)
            break
        place = Place(place.size, place.level + 1, hold.place.arrived)
        queue_deadline = min(deadlines.client, time.monotonic() + deadlines.requeue_seconds)
    total = Outcome(outcome.finish, first.prompt_tokens, produced, first.cached_tokens)
    return Ran(total, hold, cap)
