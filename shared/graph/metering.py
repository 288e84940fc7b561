"""Per-turn token accounting and budget: the turn's model calls all pass through ``MeteredLLM``.

The meter keeps the turn's total (thread-safe: retrieval branches run in parallel) and, through
a context variable set by the node wrapper, each node's own share, so nodes never add up usage
by hand. A call that would start after the budget is spent raises ``BudgetExceeded``; output
is capped to what is left.
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

    def record(self, usage: Usage) -> None:
        with self._lock:
            self.turn.input_tokens += usage.input_tokens
            self.turn.output_tokens += usage.output_tokens
        node = _node_tally.get()
        if node is not None:
            node.input_tokens += usage.input_tokens
            node.output_tokens += usage.output_tokens


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
        for chunk in self._inner.stream(self._meter.admit(request)):
            if chunk.usage is not None:
                self._meter.record(chunk.usage)
            yield chunk

    def structured(self, request: LLMRequest, schema: type[M]) -> tuple[M, Usage]:
        value, usage = self._inner.structured(self._meter.admit(request), schema)
        self._meter.record(usage)
        return value, usage


def cost_usd(tally: Tally, usd_per_m_input: float, usd_per_m_output: float) -> float:
    return (tally.input_tokens * usd_per_m_input + tally.output_tokens * usd_per_m_output) / 1e6
