"""The real google-genai adapters against a local fake of the Vertex AI REST API.

``build_vertex`` is the production factory; only the base URL and a static token differ, so the
URL shape, auth header, request bodies and SSE parsing below are what production sends and reads.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest
from pydantic import BaseModel, Field

from shared.adapters import model_guard
from shared.adapters.vertex_client import build_vertex_client
from shared.adapters.vertex_embedder import VertexEmbedder
from shared.adapters.vertex_llm import VertexLLM, build_vertex
from shared.config import Settings
from shared.deps.models import build_models
from shared.errors import (
    ConfigurationError,
    DependencyUnavailable,
    ModelDeclined,
    ModelOutputInvalid,
)
from shared.ports import LLM, ChatTurn, Embedder, LLMRequest, Usage
from shared.services.model_work import for_work
from testkit.vertex_server import (
    FakeReply,
    FakeVertexServer,
    embeddings_reply,
    error_reply,
    json_reply,
    stream_reply,
    text_reply,
)

MODEL_PATH = "/v1beta1/projects/test-project/locations/europe-west4/publishers/google/models/"


class Reminder(BaseModel):
    title: str
    minutes: int = Field(ge=0)
    tags: list[str] = Field(max_length=3)


@pytest.fixture(autouse=True)
def allow_model_requests() -> Iterator[None]:
    """This module calls the fake endpoint on purpose."""
    with model_guard.override_allow_model_requests(True):
        yield


@pytest.fixture(params=["faithful", "gemini-like"])
def fake(request: pytest.FixtureRequest) -> Iterator[FakeVertexServer]:
    """Each test runs against the faithful fake and its Gemini-like mode."""
    gemini_like = request.param == "gemini-like"
    with FakeVertexServer(token="test-token", gemini_like=gemini_like) as server:
        yield server
    assert server.pending == 0, "a scripted reply was never requested"


def settings_for(fake: FakeVertexServer, token: str = "test-token") -> Settings:
    return Settings(
        model_provider="vertex",
        gcp_project="test-project",
        vertex_location="europe-west4",
        vertex_base_url=fake.base_url,
        vertex_access_token=token,
    )


@pytest.fixture
def models(fake: FakeVertexServer) -> tuple[LLM, Embedder]:
    return build_vertex(settings_for(fake))


@pytest.fixture
def llm(models: tuple[LLM, Embedder]) -> LLM:
    return models[0]


@pytest.fixture
def embedder(models: tuple[LLM, Embedder]) -> Embedder:
    return models[1]


def conversation() -> LLMRequest:
    return LLMRequest(
        system="You are terse.",
        messages=[
            ChatTurn(role="user", text="Hi"),
            ChatTurn(role="assistant", text="Hello."),
            ChatTurn(role="user", text="Remind me to call Anna in 10 minutes."),
        ],
        max_output_tokens=100,
        temperature=0.0,
    )


def test_generate_posts_the_vertex_request_and_reads_text_and_usage(
    fake: FakeVertexServer, llm: LLM
) -> None:
    fake.add(text_reply("Sure.", input_tokens=21, output_tokens=2))

    generation = llm.generate(conversation())

    assert generation.text == "Sure."
    assert generation.usage == Usage(input_tokens=21, output_tokens=2)
    (sent,) = fake.requests
    assert sent.path == MODEL_PATH + "gemini-3.5-flash:generateContent"
    assert sent.headers["authorization"] == "Bearer test-token"
    assert [c["role"] for c in sent.body["contents"]] == ["user", "model", "user"]
    assert sent.body["systemInstruction"]["parts"] == [{"text": "You are terse."}]
    assert sent.body["generationConfig"]["maxOutputTokens"] == 100
    assert sent.body["generationConfig"]["temperature"] == 0.0
    assert "labels" not in sent.body  # none asked for


def test_the_work_a_call_does_travels_as_request_labels(fake: FakeVertexServer, llm: LLM) -> None:
    """Billing breaks costs down by them; the local model service queues background work
    behind what a user waits for."""
    fake.add(text_reply("ok"), text_reply("ok"))
    for_work(llm, "extraction").generate(conversation())
    for_work(llm, "turn").generate(conversation())
    assert [r.body["labels"] for r in fake.requests] == [
        {"work": "extraction", "priority": "background"},
        {"work": "turn", "priority": "interactive"},
    ]


def test_stream_yields_each_event_then_the_final_usage(fake: FakeVertexServer, llm: LLM) -> None:
    fake.add(stream_reply(["Call ", "Anna ", "at ", "noon."], input_tokens=12, output_tokens=4))

    chunks = list(llm.stream(conversation()))

    assert [c.text for c in chunks[:-1]] == ["Call ", "Anna ", "at ", "noon."]
    assert all(c.usage is None for c in chunks[:-1])
    assert chunks[-1].usage == Usage(input_tokens=12, output_tokens=4)
    (sent,) = fake.requests
    assert sent.rpc == "streamGenerateContent"
    assert sent.query == {"alt": ["sse"]}


def test_structured_sends_the_json_schema_and_validates_the_reply(
    fake: FakeVertexServer, llm: LLM
) -> None:
    fake.add(json_reply({"title": "Call Anna", "minutes": 10, "tags": ["call"]}))

    value, usage = llm.structured(conversation(), Reminder)

    assert value == Reminder(title="Call Anna", minutes=10, tags=["call"])
    assert usage.input_tokens == 5
    config = fake.requests[0].body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == Reminder.model_json_schema()


@pytest.mark.parametrize(
    "reply",
    [
        text_reply("Sure, here it is: {title: Call Anna}"),
        json_reply({"title": "Call Anna", "minutes": -1, "tags": []}),
        json_reply({"title": "x", "minutes": 1, "tags": ["a", "b", "c", "d"]}),
    ],
    ids=["not-json", "out-of-range", "too-many-items"],
)
def test_structured_output_that_breaks_the_schema_is_model_output_invalid(
    fake: FakeVertexServer, llm: LLM, reply: FakeReply
) -> None:
    fake.add(reply)

    with pytest.raises(ModelOutputInvalid, match="Reminder"):
        llm.structured(conversation(), Reminder)


def test_a_blocked_prompt_is_model_declined(fake: FakeVertexServer, llm: LLM) -> None:
    fake.add(FakeReply(body={"promptFeedback": {"blockReason": "SAFETY"}}))

    with pytest.raises(ModelDeclined, match="blocked") as declined:
        llm.generate(conversation())
    assert declined.value.reason == "SAFETY"


def test_a_reply_without_candidates_is_model_output_invalid(
    fake: FakeVertexServer, llm: LLM
) -> None:
    fake.add(FakeReply(body={"usageMetadata": {"promptTokenCount": 3}}))

    with pytest.raises(ModelOutputInvalid, match="no text"):
        llm.generate(conversation())


def test_embeddings_go_one_per_request_normalised_and_sized_from_settings(
    fake: FakeVertexServer, embedder: Embedder
) -> None:
    """gemini-embedding-001 takes one text per request on Vertex (its batch limit)."""
    raw = [[3.0, 4.0] + [0.0] * 766, [1.0] * 768, [0.0, 0.0, 2.0] + [0.0] * 765]
    fake.add(*(embeddings_reply([vector]) for vector in raw))

    vectors = embedder.embed(["a", "b", "c"])

    assert [len(v) for v in vectors] == [768, 768, 768]
    assert all(math.isclose(math.fsum(x * x for x in v), 1.0) for v in vectors)
    assert vectors[0][:2] == pytest.approx([0.6, 0.8])
    assert [r.path for r in fake.requests] == [MODEL_PATH + "gemini-embedding-001:embedContent"] * 3
    sent = fake.requests[2].body
    assert sent["embedContentConfig"]["outputDimensionality"] == 768
    assert sent["content"]["parts"] == [{"text": "c"}]


def test_a_single_text_uses_embed_content(fake: FakeVertexServer, embedder: Embedder) -> None:
    fake.add(embeddings_reply([[2.0] * 768]))

    (vector,) = embedder.embed(["only one"])

    assert vector[0] == pytest.approx(1 / math.sqrt(768))
    assert fake.requests[0].rpc == "embedContent"
    assert fake.requests[0].body["embedContentConfig"]["outputDimensionality"] == 768


def test_a_batch_size_over_the_models_limit_is_capped_to_it(fake: FakeVertexServer) -> None:
    client = build_vertex_client(settings_for(fake))
    embedder = VertexEmbedder(client, dimension=4, batch_size=2)
    fake.add(embeddings_reply([[1.0, 0, 0, 0]]), embeddings_reply([[0, 1.0, 0, 0]]))

    vectors = embedder.embed(["a", "b"])

    assert vectors == [[1.0, 0, 0, 0], [0, 1.0, 0, 0]]
    assert [r.rpc for r in fake.requests] == ["embedContent", "embedContent"]


def test_embeddings_of_the_wrong_dimension_are_model_output_invalid(
    fake: FakeVertexServer, embedder: Embedder
) -> None:
    fake.add(embeddings_reply([[1.0] * 3072]))

    with pytest.raises(ModelOutputInvalid, match="768"):
        embedder.embed(["a"])


def test_a_rejected_token_is_a_configuration_error(fake: FakeVertexServer) -> None:
    llm, embedder = build_vertex(settings_for(fake, token="wrong-token"))

    with pytest.raises(ConfigurationError, match="401"):
        llm.generate(conversation())
    with pytest.raises(ConfigurationError):
        embedder.embed(["a"])
    assert [r.authorized for r in fake.requests] == [False, False]


def test_503_is_retried_once_then_dependency_unavailable(fake: FakeVertexServer, llm: LLM) -> None:
    fake.add(error_reply(503), error_reply(503))

    with pytest.raises(DependencyUnavailable, match="503"):
        llm.generate(conversation())
    assert len(fake.requests) == 2


def test_a_single_503_is_absorbed_by_the_retry(fake: FakeVertexServer, llm: LLM) -> None:
    fake.add(error_reply(503), text_reply("after retry"))

    assert llm.generate(conversation()).text == "after retry"


@pytest.mark.parametrize(("status", "sdk_retries"), [(429, 0), (500, 1)])
def test_throttling_and_server_errors_are_dependency_unavailable(
    fake: FakeVertexServer, embedder: Embedder, status: int, sdk_retries: int
) -> None:
    """The SDK retries a 500 once; a 429 is the adapter's to wait out (RetryInfo)."""
    fake.add(*[error_reply(status)] * (1 + sdk_retries))

    with pytest.raises(DependencyUnavailable):
        embedder.embed(["a", "b"])


def test_a_failing_stream_is_dependency_unavailable(fake: FakeVertexServer, llm: LLM) -> None:
    fake.add(error_reply(503), error_reply(503))

    with pytest.raises(DependencyUnavailable):
        list(llm.stream(conversation()))


def test_an_unreachable_endpoint_is_dependency_unavailable(fake: FakeVertexServer) -> None:
    llm, _ = build_vertex(settings_for(fake))
    fake.stop()

    with pytest.raises(DependencyUnavailable, match="ConnectError"):
        llm.generate(conversation())


def test_the_guard_stops_calls_before_they_reach_the_network(fake: FakeVertexServer) -> None:
    llm, embedder = build_vertex(settings_for(fake))

    with model_guard.override_allow_model_requests(False):
        with pytest.raises(model_guard.ModelRequestsBlocked):
            llm.generate(conversation())
        with pytest.raises(model_guard.ModelRequestsBlocked):
            list(llm.stream(conversation()))
        with pytest.raises(model_guard.ModelRequestsBlocked):
            embedder.embed(["a"])
    assert fake.requests == []


def test_the_vertex_provider_builds_without_any_request(fake: FakeVertexServer) -> None:
    llm, embedder = build_models(settings_for(fake))

    assert isinstance(llm, VertexLLM)
    assert llm.name == "vertex:gemini-3.5-flash"
    assert isinstance(embedder, VertexEmbedder)
    assert (embedder.model_name, embedder.dimension) == ("gemini-embedding-001", 768)
    assert fake.requests == []


def test_prepare_builds_the_call_types_without_sending_anything(
    fake: FakeVertexServer, llm: LLM
) -> None:
    """The turn function's start (``Deps.preload``): nothing reaches Vertex, and a call
    made after it is the same call."""
    llm.prepare()  # type: ignore[attr-defined]
    assert fake.requests == []
    fake.add(text_reply("Sure.", input_tokens=21, output_tokens=2))
    assert llm.generate(conversation()).text == "Sure."
    assert len(fake.requests) == 1
