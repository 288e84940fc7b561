"""The speculative reply (``shared.graph.early_reply``): a message the tier leaves open starts
its reply beside the classification call, with the memory the tier's nearest label asks for
read ahead, so the user waits for one model call before the first chunk; a wrong speculation
is dropped, never shown or stored. On fakes, the tier and the scripted model behind it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from shared.app.turn import Chunk, TurnService
from shared.config import Settings
from shared.deps import Deps
from shared.errors import DependencyUnavailable
from shared.fakes.scripted_llm import ScriptedLLM
from shared.graph.metering import Meter, MeteredLLM, stopped_usage
from shared.graph.nodes import memory
from shared.graph.nodes.classification import Classification
from shared.graph.speculation import SpeculationSlot
from shared.graph.state import MemoryState
from shared.models.domain import AssistantProfile
from shared.models.memory import SELF, ExtractionChanges, FactDraft, Person
from shared.ports import ChatTurn, LLMRequest, MessagePage, StreamChunk
from shared.services.memory.retrieval import Retriever
from shared.services.memory.windows import window_for
from shared.understanding import UnderstandingTier
from tests.unit.turn_kit import add_person, classification, metadata, nodes, request
from tests.unit.understanding.conftest import with_tier

OPEN = "Can you explain how tides work?"  # the tier leaves the route open; no person, no time
MEMORY = "What do you remember about me?"  # open too, nearest a question about someone
FULL = "Tell me what my sister Anna is up to next week."  # open; Anna and a time read
ANNA = [{"name": "Anna", "role": "sister"}]
ANSWERS = {  # the model's classification of each message
    OPEN: classification(),
    MEMORY: classification(semantic=True),
    FULL: classification(semantic=True, temporal=True, entities=ANNA, when=["next week"]),
}


class Model:
    """The classification by message; each streamed reply says which one it was. The
    classification waits (up to ``wait`` seconds) for a reply call to be under way, and
    notes whether one was: that is the speculation running beside it."""

    def __init__(self, wait: float = 5.0, answers: dict[str, dict[str, Any]] | None = None) -> None:
        self.answers = {**ANSWERS, **(answers or {})}
        self.systems: list[str] = []  # of the reply calls, in order
        self.streams = 0
        self.reply_started = threading.Event()
        self.reply_beside_classification = False
        self.wait = wait
        self._lock = threading.Lock()

    def __call__(self, request: LLMRequest, schema: type[BaseModel] | None) -> Any:
        if schema is Classification:
            self.reply_beside_classification = self.reply_started.wait(self.wait)
            return self.answers.get(request.messages[-1].text, classification())
        if schema is None:
            with self._lock:
                self.systems.append(request.system)
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


def _seed(deps: Deps) -> Person:
    """Anna, the user's sister, with a plan next week and a birthday; where the user lives."""
    anna = add_person(deps, "Anna", "sibling")
    now = deps.clock.now()
    start, end = window_for("next week", now, AssistantProfile().timezone)
    facts = [
        ("The user lives in Bern", None, None),
        ("Anna asked the user to remember her birthday in May", anna, None),
        ("Anna plans to visit Lisbon next week", anna, start + (end - start) / 2),
    ]
    drafts = [
        FactDraft(
            text=text,
            type="Schedule" if at else "Other",
            subject_entity_id=person.id if person else None,
            relation_to_user=person.role_to_user if person else SELF,
            confidence=0.9,
            temporal_marker="next week" if at else None,
            time_anchor=at,
            embedding=deps.embedder.embed([text])[0],
            embedding_model=deps.embedder.model_name,
            idempotency_key=f"seed-{n}",
        )
        for n, (text, person, at) in enumerate(facts)
    ]
    deps.facts.apply_extraction("seed", "alice", ExtractionChanges(new_facts=drafts), now)
    return anna


class Reads:
    """Counts the retriever's reads (the early ones and the memory stage's)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.recalls = 0
        original = Retriever.recall

        def counted(retriever: Retriever, *args: Any, **kwargs: Any) -> Any:
            self.recalls += 1
            return original(retriever, *args, **kwargs)

        monkeypatch.setattr(Retriever, "recall", counted)


@pytest.mark.parametrize(
    ("message", "known"),
    [(MEMORY, "remember her birthday"), (FULL, "Anna plans to visit Lisbon")],
)
def test_a_memory_turn_keeps_the_reply_started_with_the_memory_read_ahead(
    deps: Deps, tier: UnderstandingTier, monkeypatch: pytest.MonkeyPatch, message: str, known: str
) -> None:
    model, reads = Model(), Reads(monkeypatch)
    wired = _deps(deps, tier, model)
    _seed(wired)
    said, _ = _said(wired, message)
    assert model.reply_beside_classification  # under way while the model classified
    assert model.streams == 1 and said == "SPECULATED reply"  # kept: no second reply call
    assert known in model.systems[0]  # it was asked with the retrieved memory
    assert reads.recalls == 1  # the memory stage took the early read, it did not read again
    ran = nodes(wired, "m1")
    assert "semantic_retrieval" in ran and "memory_assembly" in ran  # the records stay
    assert ("temporal_retrieval" in ran) == (message == FULL)


@pytest.mark.parametrize(
    ("message", "answer"),
    [
        (MEMORY, classification()),  # plain chat after all: no retrieval
        (FULL, classification(semantic=True, entities=ANNA)),  # no look into next week
        (OPEN, classification(semantic=True)),  # the model wants memory the guess skipped
        (MEMORY, classification(semantic=True, language="de")),  # to be answered in German
    ],
)
def test_a_wrong_guess_on_a_memory_path_is_dropped_never_shown_or_stored(
    deps: Deps, tier: UnderstandingTier, message: str, answer: dict[str, Any]
) -> None:
    model = Model(answers={message: answer})
    wired = _deps(deps, tier, model)
    _seed(wired)
    said, chunks = _said(wired, message)
    assert model.reply_beside_classification  # it was speculated...
    assert model.streams == 2  # ...and the turn replied anew
    assert "SPECULATED" not in said, chunks
    record = wired.conversations.get_turn("alice", "m1")
    assert record is not None and record.response is not None
    assert "SPECULATED" not in record.response.reply.text
    stored = wired.conversations.list_messages("alice", record.chat_id, MessagePage(limit=50))
    assert stored and all("SPECULATED" not in m.text for m in stored)


def test_the_response_node_drops_a_speculation_its_own_request_differs_from(
    deps: Deps, tier: UnderstandingTier, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The classification agrees, but the memory read ahead is not what the memory stage
    reads (as when a fact is stored between the two): the request decides, not the guess."""
    model = Model()
    wired = _deps(deps, tier, model)
    _seed(wired)

    def found_nothing(state: Any, context: Any) -> dict[str, Any]:
        return {"memory": MemoryState()}

    monkeypatch.setitem(memory.EARLY.retrieval, "semantic_retrieval", found_nothing)
    said, _ = _said(wired, MEMORY)
    assert model.reply_beside_classification
    assert model.streams == 2 and said == "reply number 2"
    assert "birthday" not in model.systems[0] and "birthday" in model.systems[1]


def test_an_early_read_that_fails_starts_nothing_and_the_stage_reads_on_its_own(
    deps: Deps, tier: UnderstandingTier, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = Model(wait=0.05)
    wired = _deps(deps, tier, model)
    _seed(wired)

    def down(state: Any, context: Any) -> dict[str, Any]:
        raise DependencyUnavailable("PostgreSQL is down")

    monkeypatch.setitem(memory.EARLY.retrieval, "semantic_retrieval", down)
    said, _ = _said(wired, MEMORY)
    assert said == "SPECULATED reply"  # the first (and only) reply call: the stage's
    assert not model.reply_beside_classification  # no reply without its memory
    assert model.streams == 1 and "birthday" in model.systems[0]  # the stage read it


@pytest.mark.parametrize(
    "message", ["Hi!", "My sister Anna lives in Berlin and she loves climbing."]
)
def test_no_speculation_where_the_rule_or_the_tier_settles_it(
    deps: Deps, tier: UnderstandingTier, message: str
) -> None:
    model = Model(wait=0.05)
    wired = _deps(deps, tier, model)
    _said(wired, message)
    assert not model.reply_beside_classification
    assert "structured" not in _kinds(wired)  # no classification call either


def test_a_speculation_is_claimed_only_by_the_request_it_made(deps: Deps) -> None:
    llm = ScriptedLLM(replies=["early"])
    asked = LLMRequest(system="s", messages=[ChatTurn(role="user", text="q")])
    slot = SpeculationSlot()
    slot.start(MeteredLLM(llm, Meter(30_000)), asked)
    assert slot.claim(asked.model_copy(update={"system": "s\nKnown about user: x"})) is None
    assert slot.held is None  # dropped
    slot.start(MeteredLLM(ScriptedLLM(replies=["early"]), Meter(30_000)), asked)
    held = slot.claim(asked)
    assert held is not None and "".join(c.text for c in held.chunks()) == "early"


class Stalling(ScriptedLLM):
    """Its first stream (the speculation) gives one chunk, then waits until released: a
    speculation still under way when the classification drops it."""

    def __init__(self, model: Model) -> None:
        super().__init__(handler=model)
        self.release = threading.Event()
        self.first_chunk = ""
        self._streams = 0

    def stream(self, request: LLMRequest) -> Iterator[StreamChunk]:
        self._streams += 1
        chunks = super().stream(request)
        if self._streams > 1:
            yield from chunks
            return
        first = next(chunks)
        self.first_chunk = first.text
        yield first
        self.release.wait(10)
        yield from chunks


def test_a_speculation_dropped_under_way_is_charged_to_the_turn(
    deps: Deps, tier: UnderstandingTier
) -> None:
    """Wrong guess, dropped mid-stream: its prompt and what it said so far are in the turn's
    tokens and cost, counted before the record is written, and only once."""
    model = Model(answers={MEMORY: classification()})  # plain chat after all
    wired = _deps(deps, tier, model)
    llm = Stalling(model)
    wired = Deps(wired.settings, **{**_ports(wired), "llm": llm})
    _seed(wired)
    try:
        said, _ = _said(wired, MEMORY)
    finally:
        llm.release.set()
    assert said == "reply number 2" and model.reply_beside_classification
    speculated = next(c.request for c in llm.calls if c.kind == "stream")
    cost = stopped_usage(speculated, llm.first_chunk)
    record = metadata(wired, "m1")
    assert cost.input_tokens > 0 and record.stopped_tokens == cost.input_tokens + cost.output_tokens
    assert record.input_tokens > cost.input_tokens  # beside the classification and reply


def _ports(deps: Deps) -> dict[str, Any]:
    return {k: v for k, v in deps.__dict__.items() if k != "settings"}


def test_the_speculation_asks_the_free_replys_cap_and_is_kept(
    deps: Deps, tier: UnderstandingTier
) -> None:
    model = Model()
    wired = _deps(deps, tier, model)
    settings = wired.settings.model_copy(update={"free_reply_max_output_tokens": 64})
    wired = Deps(settings, **_ports(wired))
    said, _ = _said(wired, OPEN)
    assert said == "SPECULATED reply" and model.streams == 1  # claimed: the same request
    [speculated] = [c.request for c in wired.llm.calls if c.kind == "stream"]  # type: ignore[attr-defined]
    assert speculated.max_output_tokens == 64
