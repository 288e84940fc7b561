"""The speculative reply (``shared.graph.early_reply``): a message the tier leaves open but
reads as plain chat starts its reply beside the classification call, so the user waits for
one model call before the first chunk; a wrong speculation is dropped, never shown or
stored. On fakes, the tier and the scripted model behind it."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from pydantic import BaseModel

from shared.adapters.scripted_llm import ScriptedLLM
from shared.app.turn import Chunk, TurnService
from shared.config import Settings
from shared.deps import Deps
from shared.graph.nodes.classification import Classification
from shared.graph.speculation import SpeculationSlot
from shared.ports import ChatTurn, LLMRequest, MessagePage
from shared.understanding import UnderstandingTier
from tests.unit.turn_kit import classification, metadata, request
from tests.unit.understanding.conftest import with_tier

OPEN = "Can you explain how tides work?"  # the tier leaves the route open; no person, no time
MEMORY = "What do you remember about me?"  # open too, and plain-looking: the model asks memory


class Model:
    """The classification by message; each streamed reply says which one it was. The
    classification waits (up to ``wait`` seconds) for a reply call to be under way, and
    notes whether one was: that is the speculation running beside it."""

    def __init__(self, wait: float = 5.0) -> None:
        self.streams = 0
        self.reply_started = threading.Event()
        self.reply_beside_classification = False
        self.wait = wait
        self._lock = threading.Lock()

    def __call__(self, request: LLMRequest, schema: type[BaseModel] | None) -> Any:
        if schema is Classification:
            self.reply_beside_classification = self.reply_started.wait(self.wait)
            memory = "remember" in request.messages[-1].text
            return classification(semantic=memory)
        if schema is None:
            with self._lock:
                self.streams += 1
                number = self.streams
            self.reply_started.set()
            return "SPECULATED reply" if number == 1 else f"reply number {number}"
        raise AssertionError(f"no {schema.__name__} call is scripted")


def _deps(deps: Deps, tier: UnderstandingTier, model: Model, speculative: bool = True) -> Deps:
    settings = Settings(env="test", model_provider="scripted", speculative_reply=speculative)
    ports = {k: v for k, v in with_tier(deps, tier).__dict__.items() if k != "settings"}
    return Deps(settings, **{**ports, "llm": ScriptedLLM(handler=model)})


def _said(deps: Deps, message: str) -> tuple[str, list[str]]:
    service = TurnService(deps)
    turn = service.prepare("alice", request(message))
    chunks = [e.text for e in service.events(turn) if isinstance(e, Chunk)]
    return "".join(chunks), chunks


def _kinds(deps: Deps) -> list[str]:
    return [call.kind for call in deps.llm.calls]  # type: ignore[attr-defined]


def test_an_open_turn_waits_for_one_call_before_its_first_chunk(
    deps: Deps, tier: UnderstandingTier
) -> None:
    model = Model()
    wired = _deps(deps, tier, model)
    said, _ = _said(wired, OPEN)
    assert model.reply_beside_classification  # the reply was under way during classification
    assert sorted(_kinds(wired)) == ["stream", "structured"]  # no second reply call
    assert said == "SPECULATED reply"
    assert metadata(wired, "m1").decided_by == "model"


def test_before_it_the_reply_waited_for_the_classification(
    deps: Deps, tier: UnderstandingTier
) -> None:
    model = Model(wait=0.05)
    wired = _deps(deps, tier, model, speculative=False)
    _said(wired, OPEN)
    assert not model.reply_beside_classification
    assert _kinds(wired) == ["structured", "stream"]


def test_a_wrong_speculation_is_dropped_never_shown_or_stored(
    deps: Deps, tier: UnderstandingTier
) -> None:
    model = Model()
    wired = _deps(deps, tier, model)
    said, chunks = _said(wired, MEMORY)
    assert model.reply_beside_classification  # it was speculated...
    assert model.streams == 2  # ...and the model's answer (memory wanted) replied anew
    assert "SPECULATED" not in said and said == "reply number 2", chunks
    record = wired.conversations.get_turn("alice", "m1")
    assert record is not None and record.response is not None
    assert "SPECULATED" not in record.response.reply.text
    stored = wired.conversations.list_messages("alice", record.chat_id, MessagePage(limit=50))
    assert stored and all("SPECULATED" not in m.text for m in stored)


@pytest.mark.parametrize("message", ["Hi!", "Tell me what my sister Anna is up to next week."])
def test_no_speculation_where_the_rule_or_the_tier_reads_more(
    deps: Deps, tier: UnderstandingTier, message: str
) -> None:
    model = Model(wait=0.05)
    wired = _deps(deps, tier, model)
    _said(wired, message)
    assert not model.reply_beside_classification


def test_a_speculation_is_claimed_only_by_the_request_it_made(deps: Deps) -> None:
    llm = ScriptedLLM(replies=["early"])
    asked = LLMRequest(system="s", messages=[ChatTurn(role="user", text="q")])
    slot = SpeculationSlot()
    slot.start(llm, asked)
    assert slot.claim(asked.model_copy(update={"system": "s\nKnown about user: x"})) is None
    assert slot.held is None  # dropped
    slot.start(ScriptedLLM(replies=["early"]), asked)
    held = slot.claim(asked)
    assert held is not None and "".join(c.text for c in held.chunks()) == "early"
