"""Which work a model call does, carried on the request as Vertex request labels.

In production the labels break the model's bill down by kind of work (Vertex AI reports
request labels with the usage). The local model service reads ``priority``: calls a user
waits for (a turn) go before background ones (extraction, agent jobs), so a reply never
queues behind another turn's extraction. Labels change nothing of what the model is asked.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal, TypeVar

from pydantic import BaseModel

from shared.ports import LLM, Generation, LLMRequest, StreamChunk, Usage

Work = Literal["turn", "extraction", "agent"]
M = TypeVar("M", bound=BaseModel)
_PRIORITY: dict[Work, str] = {
    "turn": "interactive",
    "extraction": "background",
    "agent": "background",
}


def labels_for(work: Work) -> dict[str, str]:
    return {"work": work, "priority": _PRIORITY[work]}


class LabelledLLM:
    """``inner`` with every request labelled for ``work``."""

    def __init__(self, inner: LLM, work: Work) -> None:
        self._inner = inner
        self._labels = labels_for(work)
        self.name = inner.name

    def generate(self, request: LLMRequest) -> Generation:
        return self._inner.generate(self._labelled(request))

    def stream(self, request: LLMRequest) -> Iterator[StreamChunk]:
        return self._inner.stream(self._labelled(request))

    def structured(self, request: LLMRequest, schema: type[M]) -> tuple[M, Usage]:
        return self._inner.structured(self._labelled(request), schema)

    def _labelled(self, request: LLMRequest) -> LLMRequest:
        return request.model_copy(update={"labels": {**request.labels, **self._labels}})


def for_work(llm: LLM, work: Work) -> LLM:
    return LabelledLLM(llm, work)
