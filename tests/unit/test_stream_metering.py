"""A stream is charged to the turn's meter once, whoever stops reading it (``metering``): the
usage its last chunk reports when read to the end, else its prompt and the text received."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from shared.errors import DependencyUnavailable
from shared.fakes.scripted_llm import ScriptedLLM
from shared.graph.metering import Meter, MeteredLLM, stopped_usage
from shared.graph.speculation import SpeculationSlot
from shared.ports import ChatTurn, LLMRequest, StreamChunk, Usage

ASKED = LLMRequest(system="You are helpful.", messages=[ChatTurn(role="user", text="Tell me")])
REPORTED = Usage(input_tokens=40, output_tokens=7)


class Held:
    """A stream that gives one chunk, then waits until released, then ends with its usage."""

    def __init__(self) -> None:
        self.name = "held"
        self.first_read = threading.Event()  # the reader took the first chunk and asked on
        self.release = threading.Event()

    def stream(self, request: LLMRequest) -> Iterator[StreamChunk]:
        yield StreamChunk(text="Once upon")
        self.first_read.set()
        self.release.wait(10)
        yield StreamChunk(text=" a time")
        yield StreamChunk(usage=REPORTED)


def test_a_stream_read_to_its_end_is_charged_its_reported_usage_once() -> None:
    held, meter = Held(), Meter(30_000)
    held.release.set()
    assert "".join(c.text for c in MeteredLLM(held, meter).stream(ASKED)) == "Once upon a time"
    assert (meter.turn.input_tokens, meter.turn.output_tokens) == (40, 7)
    assert meter.stopped.total == 0


def test_a_stream_closed_before_its_end_is_charged_its_prompt_and_what_it_said() -> None:
    meter = Meter(30_000)
    stream = MeteredLLM(ScriptedLLM(replies=["one two three four"]), meter).stream(ASKED)
    said = next(stream).text
    stream.close()  # type: ignore[attr-defined]
    cost = stopped_usage(ASKED, said)
    assert (meter.turn.input_tokens, meter.turn.output_tokens) == (
        cost.input_tokens,
        cost.output_tokens,
    )
    assert cost.input_tokens > 0 and cost.output_tokens > 0
    assert meter.stopped.total == cost.input_tokens + cost.output_tokens


def test_a_failed_stream_is_not_charged() -> None:
    meter = Meter(30_000)
    failing = ScriptedLLM(replies=[DependencyUnavailable("the model is down")])
    with pytest.raises(DependencyUnavailable):
        list(MeteredLLM(failing, meter).stream(ASKED))
    assert meter.turn.total == 0


def test_a_speculation_dropped_under_way_is_charged_at_once_and_once() -> None:
    held, meter = Held(), Meter(30_000)
    slot = SpeculationSlot()
    slot.start(MeteredLLM(held, meter), ASKED)
    speculation = slot.held
    assert speculation is not None and held.first_read.wait(10)
    slot.drop()
    cost = stopped_usage(ASKED, "Once upon")
    charged = (meter.turn.input_tokens, meter.turn.output_tokens)
    assert charged == (cost.input_tokens, cost.output_tokens)  # before its thread stops
    held.release.set()
    assert list(speculation.chunks()) == [StreamChunk(text="Once upon")]  # nothing after
    assert (meter.turn.input_tokens, meter.turn.output_tokens) == charged  # not charged twice
    assert meter.stopped.total == sum(charged)


def test_a_speculation_read_to_its_end_then_dropped_is_charged_its_usage_only() -> None:
    held, meter = Held(), Meter(30_000)
    held.release.set()
    slot = SpeculationSlot()
    slot.start(MeteredLLM(held, meter), ASKED)
    speculation = slot.held
    assert speculation is not None
    assert "".join(c.text for c in speculation.chunks()) == "Once upon a time"
    slot.drop()
    assert (meter.turn.input_tokens, meter.turn.output_tokens) == (40, 7)
    assert meter.stopped.total == 0
