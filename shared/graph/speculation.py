"""A speculative reply: the reply call started beside the classification call.

When the understanding tier leaves a message open, the classify node guesses the intent from
the tier's reading (``early_reply``), runs the memory steps that intent needs and starts the
reply the simple path would make with that memory, in a thread, while the classification
call runs. So a turn the tier does not settle waits for one model call before its first
token, not two. The memory steps' updates are kept here by their inputs: the memory stage
takes one instead of running its step again when it reads exactly the same inputs, so the
reply's request comes out the same and the stores are read once.

What keeps it safe:

- nothing of it is shown or stored until the response node claims it, and it claims it only
  when the request it would make now is exactly the speculated one (same system prompt, so
  the same language, memory and summary; same messages): a speculation made on a wrong guess
  cannot reach the user;
- the classify node drops it at once when the classification disagrees (another route,
  other people, other retrieval, a plan, another language); whatever is left unclaimed is
  dropped when the turn's reply is recorded, or when the turn ends;
- a dropped stream stops at its next chunk; its tokens are still paid, and charged to the
  turn's meter when it is dropped, before the turn's record is written (``StreamBill``:
  the usage its last chunk reported, or its prompt and the text received so far);
  ``bench.turn --realistic`` prints the share of turns that pay for one.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from shared.graph.metering import MeteredLLM, StreamBill
from shared.ports import LLMRequest, StreamChunk

_END = None


class Speculation:
    def __init__(self, llm: MeteredLLM, request: LLMRequest) -> None:
        self.request = request
        self._llm = llm
        self._bill: StreamBill | None = None
        self._lock = threading.Lock()
        self._items: queue.Queue[StreamChunk | BaseException | None] = queue.Queue()
        self._dropped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="speculative-reply", daemon=True)
        self._thread.start()

    @property
    def dropped(self) -> bool:
        return self._dropped.is_set()

    def drop(self) -> None:
        """Stop reading it; nothing more of it is kept; what it cost so far is charged now."""
        with self._lock:
            self._dropped.set()
            bill = self._bill
        if bill is not None:
            bill.stop()

    def chunks(self) -> Iterator[StreamChunk]:
        """Its chunks as they come (those already held first); its error, if it failed."""
        while True:
            item = self._items.get()
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    def _run(self) -> None:
        bill: StreamBill | None = None
        try:
            with self._lock:
                if self._dropped.is_set():
                    return  # dropped before its call went out: nothing to pay
                bill, stream = self._llm.billed_stream(self.request)
                self._bill = bill
            try:
                for chunk in stream:
                    if not bill.saw(chunk):  # dropped: charged by ``drop``
                        break
                    self._items.put(chunk)
            finally:
                close = getattr(stream, "close", None)
                if close is not None:
                    close()
        except BaseException as exc:  # handed to whoever claims it, raised there
            if bill is not None:
                bill.failed()
            self._items.put(exc)
        finally:
            self._items.put(_END)


@dataclass
class SpeculationSlot:
    """The turn's one speculation, on its run context (never in the checkpointed state), and
    the memory steps run ahead for it, by their inputs, for the memory stage to take."""

    held: Speculation | None = None
    early: dict[str, dict[str, Any]] = field(default_factory=dict)

    def keep(self, inputs: str, update: dict[str, Any]) -> None:
        self.early[inputs] = update

    def taken(self, inputs: str) -> dict[str, Any] | None:
        return self.early.pop(inputs, None)

    def start(self, llm: MeteredLLM, request: LLMRequest) -> None:
        self.drop()
        self.held = Speculation(llm, request)

    def claim(self, request: LLMRequest) -> Speculation | None:
        """The speculation, taken, if it asked exactly ``request``; else it is dropped."""
        held, self.held = self.held, None
        if held is None:
            return None
        if held.dropped or _asked(held.request) != _asked(request):
            held.drop()
            return None
        return held

    def drop(self) -> None:
        held, self.held = self.held, None
        if held is not None:
            held.drop()


def _asked(request: LLMRequest) -> tuple[str, str, int, tuple[tuple[str, str], ...]]:
    messages = tuple((m.role, m.text) for m in request.messages)
    return request.kind, request.system, request.max_output_tokens, messages
