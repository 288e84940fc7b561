"""The offline default models, loaded for real once for this module (SmolLM2 and MiniLM)."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator

import numpy as np
import pytest
from pydantic import BaseModel, Field

from shared.adapters import model_guard
from shared.adapters.local_embedder import LocalEmbedder
from shared.adapters.local_llm import LocalLLM
from shared.ports import ChatTurn, LLMRequest

pytestmark = pytest.mark.model


class Person(BaseModel):
    name: str
    city: str


class People(BaseModel):
    people: list[Person] = Field(max_length=3)


class Tags(BaseModel):
    tags: list[str]  # unbounded here: the adapter must bound it for the grammar


@pytest.fixture(scope="module", autouse=True)
def allow_model_requests() -> Iterator[None]:
    """This module loads the local models on purpose."""
    with model_guard.override_allow_model_requests(True):
        yield


@pytest.fixture(scope="module")
def llm(allow_model_requests: None) -> LocalLLM:
    model = LocalLLM(threads=2, max_items=4)
    assert model.load() < 30
    return model


@pytest.fixture(scope="module")
def embedder(allow_model_requests: None) -> LocalEmbedder:
    model = LocalEmbedder()
    model.load()
    return model


def ask(text: str, system: str = "", max_tokens: int = 48) -> LLMRequest:
    return LLMRequest(
        system=system,
        messages=[ChatTurn(role="user", text=text)],
        max_output_tokens=max_tokens,
        temperature=0.0,
    )


def test_generate_answers_with_usage(llm: LocalLLM) -> None:
    generation = llm.generate(ask("What is the capital of France?", system="Be helpful."))

    assert generation.text.strip()  # a 135M model's content is not worth asserting on
    assert generation.usage.input_tokens > 0
    assert 0 < generation.usage.output_tokens <= 48
    assert llm.last_tokens_per_second is not None


def test_stream_yields_several_chunks_then_usage(llm: LocalLLM) -> None:
    chunks = list(llm.stream(ask("Name three colours.")))

    texts = [c.text for c in chunks if c.text]
    assert len(texts) > 1
    assert all(c.usage is None for c in chunks[:-1])
    last = chunks[-1].usage
    assert last is not None
    assert last.output_tokens >= len(texts)


def test_a_stream_closed_early_leaves_the_model_usable(llm: LocalLLM) -> None:
    stream = llm.stream(ask("Count from one to fifty in words.", max_tokens=200))
    assert next(stream).text
    stream.close()

    assert llm.generate(ask("Say hello.", max_tokens=8)).text


def test_structured_output_validates_and_respects_the_list_bound(llm: LocalLLM) -> None:
    request = ask(
        "Anna lives in Zurich. Ben lives in Bern. Carla lives in Basel. Dan lives in Chur.",
        system="List the people mentioned and their city.",
        max_tokens=200,
    )

    value, usage = llm.structured(request, People)

    assert isinstance(value, People)
    assert len(value.people) <= 3
    assert usage.output_tokens > 0


def test_structured_output_bounds_an_unbounded_list(llm: LocalLLM) -> None:
    request = ask("Give tags for: " + "dog " * 40, system="Tag the text.", max_tokens=300)

    value, _ = llm.structured(request, Tags)

    assert len(value.tags) <= 4  # max_items given to the adapter


def test_concurrent_calls_share_one_model(llm: LocalLLM) -> None:
    results: list[str] = []

    def call() -> None:
        results.append(llm.generate(ask("Say yes.", max_tokens=8)).text)

    threads = [threading.Thread(target=call) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert len(results) == 2
    assert all(results)


def test_embedder_reproduces_the_published_similarity_matrix(embedder: LocalEmbedder) -> None:
    """sentence-transformers' documented output for all-MiniLM-L6-v2 on these sentences."""
    vectors = np.array(
        embedder.embed(
            ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
        )
    )

    expected = np.array([[1.0, 0.6660, 0.1046], [0.6660, 1.0, 0.1411], [0.1046, 0.1411, 1.0]])
    np.testing.assert_allclose(vectors @ vectors.T, expected, atol=1e-3)


def test_embedder_places_similar_sentences_closer(embedder: LocalEmbedder) -> None:
    dog, puppy, market = np.array(
        embedder.embed(["I love my dog", "I adore my puppy", "The stock market fell"])
    )

    assert dog @ puppy > dog @ market + 0.3


def test_embedder_vectors_are_unit_length_384_and_batch_independent(
    embedder: LocalEmbedder,
) -> None:
    texts = ["short", "a somewhat longer sentence about nothing in particular", "x " * 400]

    batch = embedder.embed(texts)
    singles = [embedder.embed([text])[0] for text in texts]

    assert [len(v) for v in batch] == [384, 384, 384]
    assert all(math.isclose(float(np.linalg.norm(v)), 1.0, rel_tol=1e-5) for v in batch)
    np.testing.assert_allclose(np.array(batch), np.array(singles), atol=1e-5)
    assert embedder.embed(["short"]) == embedder.embed(["short"])


def test_the_turn_graph_runs_on_the_offline_model(llm: LocalLLM, embedder: LocalEmbedder) -> None:
    """What `make dev` runs: every structured call of the graph validates on SmolLM2."""
    from datetime import UTC, datetime

    from shared.adapters.clock import FixedClock
    from shared.adapters.fake_cache import FakeCache, FakeIdempotencyStore
    from shared.adapters.fake_conversations import FakeConversationStore
    from shared.adapters.fake_facts import (
        FakeContactStore,
        FakeFactStore,
        FakePendingStore,
    )
    from shared.adapters.fake_keyring import FakeKeyRing
    from shared.adapters.fake_profiles import FakeProfileStore
    from shared.adapters.fake_queues import FakePublisher, FakeTaskQueue
    from shared.app.turn import TurnService
    from shared.config import Settings
    from shared.deps import Deps
    from shared.models.wire import TurnRequest

    clock = FixedClock(datetime(2026, 11, 21, 12, 0, tzinfo=UTC))
    contacts = FakeContactStore(clock)
    deps = Deps(
        Settings(env="test", model_provider="local"),
        clock=clock, llm=llm, embedder=embedder,
        conversations=FakeConversationStore(), idempotency=FakeIdempotencyStore(),
        cache=FakeCache(clock), facts=FakeFactStore(contacts, clock), contacts=contacts,
        pending=FakePendingStore(contacts), tasks=FakeTaskQueue(),
        publisher=FakePublisher(), profiles=FakeProfileStore(), keyring=FakeKeyRing(),
    )  # fmt: skip
    service = TurnService(deps)
    for number, message in enumerate(
        ["What is the capital of France?", "Please research hotels in Rome and draft a note."]
    ):
        response = service.run(
            "alice", TurnRequest(message=message, client_message_id=f"m{number}")
        )
        record = deps.conversations.get_turn("alice", f"m{number}")
        assert record is not None and record.metadata is not None
        assert record.metadata.outcome == "ok", record.metadata
        assert response.reply.text.strip()
