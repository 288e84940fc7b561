"""The local model service with the real weights (SmolLM2, MiniLM), called through the
production ``vertex`` adapters as the functions call it under ``make dev``."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from google.genai import types
from pydantic import BaseModel, Field

from scripts.model_service.child import Child, child_service
from shared.adapters import model_guard
from shared.adapters.vertex_llm import build_vertex, build_vertex_client
from shared.config import Settings
from shared.errors import DependencyUnavailable
from shared.ports import LLM, ChatTurn, Embedder, LLMRequest

# SmolLM2 on 2 cores shared with the rest of the suite: calls may take far longer than alone.
pytestmark = [pytest.mark.model, pytest.mark.timeout(900)]


class Person(BaseModel):
    name: str
    city: str


class People(BaseModel):
    people: list[Person] = Field(max_length=3)


@pytest.fixture(scope="module", autouse=True)
def allow_model_requests() -> Iterator[None]:
    """This module calls the local model on purpose."""
    with model_guard.override_allow_model_requests(True):
        yield


@pytest.fixture(scope="module")
def service() -> Iterator[Child]:
    """Limits high enough that a slow machine never cuts a call short: what is tested here is
    the output, not the limits."""
    limits = ("--max-generation-seconds", "300", "--max-queue-seconds", "900")
    with child_service(*limits) as child:
        yield child


@pytest.fixture(scope="module")
def tight() -> Iterator[Child]:
    """Short limits: generations stop after 6 s (prompt evaluation, which cannot be stopped,
    included), nobody waits more than 0.2 s."""
    limits = ("--max-generation-seconds", "6", "--max-queue-seconds", "0.2")
    with child_service(*limits, "--max-output-tokens", "4000") as child:
        yield child


# Output the grammar forces to be long (at least 200 words), whatever the model thinks; only
# keywords Vertex documents (the service refuses minLength as Vertex would).
LONG = {
    "type": "object",
    "properties": {
        "words": {
            "type": "array",
            "items": {"type": "string", "enum": ["lighthouse"]},
            "minItems": 200,
            "maxItems": 300,
        }
    },
    "required": ["words"],
}


def long_generation(child: Child) -> types.GenerateContentResponse:
    client = build_vertex_client(Settings(env="test", **child.settings()))
    config = types.GenerateContentConfig(
        max_output_tokens=4000, response_mime_type="application/json", response_json_schema=LONG
    )
    return client.models.generate_content(
        model=child.model, contents="Write an essay about lighthouses.", config=config
    )


def models(child: Child) -> tuple[LLM, Embedder]:
    return build_vertex(Settings(env="test", **child.settings()))


def ask(text: str, system: str = "", max_tokens: int = 48) -> LLMRequest:
    return LLMRequest(
        system=system,
        messages=[ChatTurn(role="user", text=text)],
        max_output_tokens=max_tokens,
        temperature=0.0,
    )


def test_structured_output_validates_against_its_schema(service: Child) -> None:
    llm, _ = models(service)
    request = ask(
        "Anna lives in Zurich. Ben lives in Bern. Carla lives in Basel. Dan lives in Chur.",
        system="List the people mentioned and their city.",
        max_tokens=200,
    )

    value, usage = llm.structured(request, People)

    assert isinstance(value, People)
    assert 1 <= len(value.people) <= 3
    assert usage.input_tokens > 0 and usage.output_tokens > 0


def test_a_stream_arrives_in_several_chunks_then_usage(service: Child) -> None:
    llm, _ = models(service)

    chunks = list(llm.stream(ask("Name three colours.")))

    texts = [c.text for c in chunks if c.text]
    assert len(texts) > 1
    usage = chunks[-1].usage
    assert usage is not None and usage.output_tokens >= len(texts)


def test_a_stream_closed_early_leaves_the_service_usable(service: Child) -> None:
    llm, _ = models(service)
    stream = iter(llm.stream(ask("Count from one to fifty in words.", max_tokens=200)))
    assert next(stream).text
    stream.close()  # type: ignore[attr-defined]

    assert llm.generate(ask("Say hello.", max_tokens=8)).text
    assert "cancelled" in wait_for_finish(service, "cancelled")


def wait_for_finish(child: Child, finish: str) -> dict[str, int]:
    """The service notices a closed stream at its next write: poll until it has."""
    deadline = time.monotonic() + 30
    while (finished := child.health()["finished"]).get(finish) is None:
        assert time.monotonic() < deadline, f"no {finish} generation: {finished}"
        time.sleep(0.1)
    return dict(finished)


def test_embeddings_have_384_dimensions_and_a_sane_cosine_ordering(service: Child) -> None:
    _, embedder = models(service)

    dog, puppy, market = np.array(
        embedder.embed(["I love my dog", "I adore my puppy", "The stock market fell"])
    )
    (single,) = embedder.embed(["I love my dog"])

    assert dog.shape == (384,)
    assert dog @ puppy > dog @ market + 0.3
    np.testing.assert_allclose(single, dog, atol=1e-5)


def test_a_generation_over_the_time_cap_returns_bounded(tight: Child) -> None:
    response = long_generation(tight)

    candidate = response.candidates[0] if response.candidates else None
    assert candidate is not None and candidate.finish_reason == types.FinishReason.OTHER
    assert "time limit" in (candidate.finish_message or "")
    assert response.text
    assert 0 < (response.usage_metadata.candidates_token_count or 0) < 4000


def test_a_request_that_waits_past_its_queue_deadline_is_dependency_unavailable(
    tight: Child,
) -> None:
    llm, _ = models(tight)
    holder = threading.Thread(target=long_generation, args=(tight,))
    holder.start()
    try:
        wait_until_running(tight)

        with pytest.raises(DependencyUnavailable, match="429"):
            llm.generate(ask("Say hello."))
    finally:
        holder.join(30)
    # the call only: the SDK leaves a 429 to the adapter, which waits for a RetryInfo delay only
    assert tight.health()["text_lane"]["turned_away"] >= 1


def wait_until_running(child: Child) -> None:
    deadline = time.monotonic() + 30
    while child.health()["text_lane"]["running"] == 0:
        assert time.monotonic() < deadline, "the first generation never started"
        time.sleep(0.01)


def people_at_once(child: Child, texts: list[str], max_tokens: int) -> dict[int, Any]:
    """The people of each text, all asked at the same time (by index)."""
    llm, _ = models(child)
    results: dict[int, Any] = {}

    def call(n: int) -> None:
        request = ask(texts[n], system="List the people.", max_tokens=max_tokens)
        results[n] = llm.structured(request, People)[0]

    threads = [threading.Thread(target=call, args=(n,)) for n in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(600)
    return results


def test_concurrent_requests_queue_one_at_a_time_and_all_complete(service: Child) -> None:
    before = service.health()["text_lane"]

    results = people_at_once(service, [f"{name} lives in Bern." for name in "ABCD"], 100)

    assert sorted(results) == [0, 1, 2, 3]
    assert all(isinstance(value, People) for value in results.values())
    lane = service.health()["text_lane"]
    assert lane["admitted"] - before["admitted"] == 4
    assert lane["peak_running"] == 1
    assert lane["peak_waiting"] >= 1


def test_two_slots_decode_two_generations_together() -> None:
    """``--parallel 2``: llama.cpp runs both at once, each with the whole ``--n-ctx``."""
    limits = ("--max-generation-seconds", "300", "--max-queue-seconds", "900")
    with child_service(*limits, "--parallel", "2", "--n-ctx", "512") as child:
        # ~300 tokens each: over half of 512, so neither would fit a context split in two
        results = people_at_once(child, [f"{name} lives in Bern. " * 60 for name in "AB"], 60)
        lane = child.health()["text_lane"]

    assert sorted(results) == [0, 1]
    assert all(isinstance(value, People) for value in results.values())
    assert (lane["admitted"], lane["peak_running"], lane["peak_waiting"]) == (2, 2, 0)


def test_the_turn_graph_runs_on_the_service(service: Child) -> None:
    """What `make dev` runs: every structured call of the graph validates on SmolLM2."""
    from datetime import UTC, datetime

    from shared.app.turn import TurnService
    from shared.deps import Deps
    from shared.fakes.clock import FixedClock
    from shared.models.wire import TurnRequest
    from testkit.fakes import in_memory_stores

    llm, embedder = models(service)
    clock = FixedClock(datetime(2026, 11, 21, 12, 0, tzinfo=UTC))
    settings = Settings(env="test", **service.settings())
    deps = Deps(settings, clock=clock, llm=llm, embedder=embedder, **in_memory_stores(clock))
    turns = TurnService(deps)
    for number, message in enumerate(
        ["What is the capital of France?", "Please research hotels in Rome and draft a note."]
    ):
        response = turns.run("alice", TurnRequest(message=message, client_message_id=f"m{number}"))
        record = deps.conversations.get_turn("alice", f"m{number}")
        assert record is not None and record.metadata is not None
        assert record.metadata.outcome == "ok", record.metadata
        assert response.reply.text.strip()
