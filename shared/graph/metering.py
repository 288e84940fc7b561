"""Per-turn token accounting and budget: the turn's model calls all pass through ``MeteredLLM``.

The meter keeps the turn's total (thread-safe: retrieval branches run in parallel) and, through
a context variable set by the node wrapper, each node's own share, so nodes never add up usage
by hand. A call that would start after the budget is spent raises ``BudgetExceeded``; output
is capped to what is left.

A stream is paid even when nobody reads it to its end (a speculative reply dropped, a turn
stopped by double texting): the model reports its usage only on the last chunk, so a stream
stopped before it is charged an estimate, once (``StreamBill``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel

from shared.errors import BudgetExceeded
from shared.ports import LLM, Generation, LLMRequest, StreamChunk, Usage

M = TypeVar("M", bound=BaseModel)


@dataclass
class Tally:
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


_node_tally: ContextVar[Tally | None] = ContextVar("node_tally", default=None)


class Meter:
    def __init__(self, budget_tokens: int) -> None:
        self.budget = budget_tokens
        self.turn = Tally()
        self.stopped = Tally()  # of streams stopped before their end (in ``turn`` too)
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int:
        return max(0, self.budget - self.turn.total)

    @contextmanager
    def node_scope(self) -> Iterator[Tally]:
        tally = Tally()
        token = _node_tally.set(tally)
        try:
            yield tally
        finally:
            _node_tally.reset(token)

    def admit(self, request: LLMRequest) -> LLMRequest:
        left = self.remaining
        if left <= 0:
            raise BudgetExceeded(f"the turn spent its budget of {self.budget} tokens")
        if request.max_output_tokens > left:
            return request.model_copy(update={"max_output_tokens": left})
        return request

    def record(self, usage: Usage, stopped: bool = False) -> None:
        with self._lock:
            self.turn.input_tokens += usage.input_tokens
            self.turn.output_tokens += usage.output_tokens
            if stopped:
                self.stopped.input_tokens += usage.input_tokens
                self.stopped.output_tokens += usage.output_tokens
        node = _node_tally.get()
        if node is not None:
            node.input_tokens += usage.input_tokens
            node.output_tokens += usage.output_tokens


def approx_tokens(text: str) -> int:
    return len(text) // 4 + 1  # about four characters per token for Latin text


def stopped_usage(request: LLMRequest, said: str) -> Usage:
    """What a stream stopped before its end is charged: its whole prompt (the model read it
    before the first token) and the text received, a lower bound of the output it made."""
    prompt = approx_tokens(request.system) + sum(approx_tokens(m.text) for m in request.messages)
    return Usage(input_tokens=prompt, output_tokens=approx_tokens(said) if said else 0)


class StreamBill:
    """One stream's cost, charged to the meter exactly once, from whichever thread comes
    first: the usage its last chunk reports, or, stopped before that, ``stopped_usage``. A
    stream that failed is not charged (the model bills no failed call)."""

    def __init__(self, meter: Meter, request: LLMRequest) -> None:
        self._meter, self._request = meter, request
        self._said: list[str] = []
        self._settled = False
        self._lock = threading.Lock()

    def saw(self, chunk: StreamChunk) -> bool:
        """Note a chunk; False once the stream was stopped (the chunk is not to be used)."""
        with self._lock:
            if self._settled:
                return False
            if chunk.usage is not None:
                self._meter.record(chunk.usage)
                self._settled = True
            else:
                self._said.append(chunk.text)
            return True

    def stop(self) -> None:
        with self._lock:
            if not self._settled:
                self._settled = True
                self._meter.record(stopped_usage(self._request, "".join(self._said)), True)

    def failed(self) -> None:
        with self._lock:
            self._settled = True


class MeteredLLM:
    def __init__(self, inner: LLM, meter: Meter) -> None:
        self._inner = inner
        self._meter = meter
        self.name = inner.name

    def generate(self, request: LLMRequest) -> Generation:
        result = self._inner.generate(self._meter.admit(request))
        self._meter.record(result.usage)
        return result

    def stream(self, request: LLMRequest) -> Iterator[StreamChunk]:
        bill, chunks = self.billed_stream(request)
        try:
            for chunk in chunks:
                bill.saw(chunk)
                yield chunk
        except GeneratorExit:  # the reader stopped before the end: the stream is still paid
            bill.stop()
            raise
        except BaseException:
            bill.failed()
            raise

    def billed_stream(self, request: LLMRequest) -> tuple[StreamBill, Iterator[StreamChunk]]:
        """The stream, unmetered, and its bill: the reader charges it (``StreamBill.saw``,
        ``stop``), so another thread can stop it and have it charged at once."""
        admitted = self._meter.admit(request)
        return StreamBill(self._meter, admitted), self._inner.stream(admitted)

    def structured(self, request: LLMRequest, schema: type[M]) -> tuple[M, Usage]:
        value, usage = self._inner.structured(self._meter.admit(request), schema)
        self._meter.record(usage)
        return value, usage


def cost_usd(tally: Tally, usd_per_m_input: float, usd_per_m_output: float) -> float:
    return (tally.input_tokens * usd_per_m_input + tally.output_tokens * usd_per_m_output) / 1e6
