"""The model service over HTTP, driven by the production ``vertex`` adapters (no weights)."""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
from google.genai import types
from pydantic import BaseModel, Field

from scripts.model_service.service import Limits
from shared.adapters.vertex_llm import build_vertex_client
from shared.errors import ConfigurationError, DependencyUnavailable, ModelNotFound
from shared.ports import ChatTurn, LLMRequest, Usage
from tests.unit.model_service.conftest import TEXT_MODEL, TOKEN, Running, ScriptedEngine, serving

MODEL_URL = "/v1beta1/projects/p/locations/l/publishers/google/models/"


class Reminder(BaseModel):
    title: str
    minutes: int = Field(ge=0)


def conversation(max_tokens: int = 500) -> LLMRequest:
    return LLMRequest(
        system="Be terse.",
        messages=[
            ChatTurn(role="user", text="Hi"),
            ChatTurn(role="assistant", text="Hello."),
            ChatTurn(role="user", text="Remind me."),
        ],
        max_output_tokens=max_tokens,
        temperature=0.1,
    )


def post(running: Running, rpc: str, body: object, token: str = TOKEN) -> httpx.Response:
    return httpx.post(
        f"{running.url}{MODEL_URL}{TEXT_MODEL}:{rpc}",
        content=body if isinstance(body, bytes) else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        timeout=10,
    )


def test_generate_translates_the_conversation_and_caps_max_tokens(running: Running) -> None:
    llm, _ = running.models()

    generation = llm.generate(conversation(max_tokens=500))

    assert generation.text == "Hello there."
    assert generation.usage == Usage(input_tokens=7, output_tokens=3)
    (call,) = running.engine.calls
    assert call.system == "Be terse."
    assert call.messages == (("user", "Hi"), ("assistant", "Hello."), ("user", "Remind me."))
    assert call.max_tokens == 64  # the service's cap, not the 500 asked
    assert call.temperature == pytest.approx(0.1)
    assert call.schema is None


def test_structured_hands_the_json_schema_to_the_engine(running: Running) -> None:
    running.engine.pieces = ('{"title": "Call Anna",', ' "minutes": 10}')
    llm, _ = running.models()

    value, _ = llm.structured(conversation(), Reminder)

    assert value == Reminder(title="Call Anna", minutes=10)
    assert running.engine.calls[0].schema == Reminder.model_json_schema()


def test_a_stream_sends_one_event_per_piece_and_finishes_on_the_last(running: Running) -> None:
    llm, _ = running.models()
    chunks = list(llm.stream(conversation()))

    assert [c.text for c in chunks[:-1]] == ["Hello", " there", "."]
    assert chunks[-1].usage == Usage(input_tokens=7, output_tokens=3)
    client = build_vertex_client(running.settings())
    events = list(client.models.generate_content_stream(model=TEXT_MODEL, contents="Hi"))
    assert [e.candidates[0].finish_reason for e in events if e.candidates] == [
        None,
        None,
        types.FinishReason.STOP,
    ]


def test_a_generation_past_its_time_limit_stops_and_says_so() -> None:
    slow = ScriptedEngine(pieces=["tick "] * 60, seconds_per_piece=0.02)
    with serving(slow, Limits(max_generation_seconds=0.1)) as running:
        client = build_vertex_client(running.settings())
        response = client.models.generate_content(model=TEXT_MODEL, contents="Count.")

        candidate = response.candidates[0]
        assert candidate.finish_reason == types.FinishReason.OTHER
        assert "time limit" in (candidate.finish_message or "")
        assert 0 < (response.usage_metadata.candidates_token_count or 0) < 60
        assert response.text and response.text.startswith("tick ")


@contextmanager
def busy(limits: Limits) -> Iterator[Running]:
    """A service whose engine is held by a first generation for the ``with`` block."""
    engine = ScriptedEngine()
    engine.hold.set()
    with serving(engine, limits) as running:
        llm, _ = running.models()
        first = threading.Thread(target=lambda: llm.generate(conversation()))
        first.start()
        assert engine.started.wait(5)
        try:
            yield running
        finally:
            engine.hold.clear()
            first.join(5)


def test_a_busy_engine_with_a_full_queue_is_429_and_dependency_unavailable() -> None:
    with busy(Limits(max_waiting=0)) as running:
        refused = post(running, "generateContent", {"contents": [{"parts": [{"text": "x"}]}]})
        with pytest.raises(DependencyUnavailable, match="429"):
            running.models()[0].generate(conversation())

    assert refused.status_code == 429
    assert refused.json()["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert len(running.engine.calls) == 1  # nothing ran for the refused requests
    # 1 + the adapter's one try: the SDK leaves a 429 to the adapter, which waits only for
    # a RetryInfo delay (none here)
    assert running.service.text_lane.stats().turned_away == 2


def test_two_slots_run_two_generations_at_once_and_refuse_a_third() -> None:
    with busy(Limits(slots=2, max_waiting=0)) as running:
        body = {"contents": [{"parts": [{"text": "x"}]}]}
        second = threading.Thread(target=post, args=(running, "generateContent", body))
        second.start()
        while len(running.engine.calls) < 2:  # admitted beside the held first one
            assert second.is_alive()
            time.sleep(0.001)
        refused = post(running, "generateContent", body)
        assert running.service.text_lane.stats().running == 2
    second.join(5)

    assert refused.status_code == 429
    assert len(running.engine.calls) == 2
    assert running.service.health()["text_lane"]["peak_running"] == 2


def test_a_request_still_waiting_at_its_deadline_is_refused() -> None:
    with busy(Limits(max_queue_seconds=0.05)) as running:
        refused = post(running, "generateContent", {"contents": [{"parts": [{"text": "x"}]}]})

    assert refused.status_code == 429
    assert "busy" in refused.json()["error"]["message"]
    assert running.engine.calls[1:] == []


def test_a_wrong_token_is_a_configuration_error(running: Running) -> None:
    llm, embedder = running.models(token="stolen")

    with pytest.raises(ConfigurationError, match="401"):
        llm.generate(conversation())
    with pytest.raises(ConfigurationError, match="401"):
        embedder.embed(["a"])
    assert running.engine.calls == []


def test_another_model_name_is_404(running: Running) -> None:
    llm, _ = running.models(vertex_model="gemini-2.5-flash")

    with pytest.raises(ModelNotFound, match="404") as raised:
        llm.generate(conversation())
    assert "scripted-text" in str(raised.value.__cause__)


@pytest.mark.parametrize("texts", [["one"], ["one", "three", "seventeen"]])
def test_embeddings_through_predict_keep_order_and_size(running: Running, texts: list[str]) -> None:
    _, embedder = running.models()

    vectors = embedder.embed(texts)

    assert [len(v) for v in vectors] == [384] * len(texts)
    assert [v.index(1.0) for v in vectors] == [len(t) for t in texts]
    assert all(math.isclose(sum(x * x for x in v), 1.0) for v in vectors)


@pytest.mark.parametrize(
    ("rpc", "body", "values"),
    [
        ("embedContent", {"content": {"parts": [{"text": "abc"}]}}, "embedding"),
        (
            "batchEmbedContents",
            {"requests": [{"content": {"parts": [{"text": "ab"}]}}]},
            "embeddings",
        ),
    ],
)
def test_embed_content_calls_are_served_too(
    running: Running, rpc: str, body: object, values: str
) -> None:
    url = f"{running.url}{MODEL_URL}all-MiniLM-L6-v2:{rpc}"
    response = httpx.post(url, json=body, headers={"Authorization": f"Bearer {TOKEN}"})

    assert response.status_code == 200
    assert values in response.json()


def test_a_dimension_the_model_lacks_is_400(running: Running) -> None:
    url = f"{running.url}{MODEL_URL}all-MiniLM-L6-v2:predict"
    body = {"instances": [{"content": "a"}], "parameters": {"outputDimensionality": 768}}
    response = httpx.post(url, json=body, headers={"Authorization": f"Bearer {TOKEN}"})

    assert response.status_code == 400
    assert "384 dimensions" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("body", "status", "complaint"),
    [
        (b"{not json", 400, "not JSON"),
        ({"contents": []}, 400, "contents"),
        ({"contents": [{"parts": [{"inlineData": {"data": "x"}}]}]}, 400, "inlineData"),
        ({"contents": [{"parts": [{"text": "x"}]}], "tools": [{}]}, 400, "tools"),
        (
            {"contents": [{"parts": [{"text": "x"}]}], "generationConfig": {"candidateCount": 2}},
            400,
            "candidateCount",
        ),
        (b"x" * (4 * 1024 * 1024 + 1), 413, "over"),
    ],
    ids=["malformed", "empty", "non-text-part", "tools", "two-candidates", "too-large"],
)
def test_bodies_it_cannot_serve_are_refused_with_vertex_errors(
    running: Running, body: object, status: int, complaint: str
) -> None:
    response = post(running, "generateContent", body)

    assert response.status_code == status
    assert complaint in response.json()["error"]["message"]
    assert running.engine.calls == []


def test_health_reports_the_lanes_without_a_token(running: Running) -> None:
    llm, _ = running.models()
    llm.generate(conversation())

    health = httpx.get(f"{running.url}/healthz").json()

    assert health["models"] == {"text": TEXT_MODEL, "embedding": "all-MiniLM-L6-v2"}
    assert health["text_lane"]["admitted"] == 1
    assert health["finished"] == {"stop": 1}
