"""Every failure shape of Vertex AI, through the real google-genai adapter and the faithful
fake: what the fake refuses (as Vertex does), and the product error each one becomes (the
status and code a client would see; a turn answers them with a reply, see tests/e2e)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import date

import httpx
import pytest

from shared.adapters import model_guard
from shared.adapters.vertex_client import build_vertex_client
from shared.adapters.vertex_llm import VertexLLM
from shared.config import Settings
from shared.errors import (
    AppError,
    DependencyUnavailable,
    ModelDeclined,
    ModelNotFound,
    ModelOutputInvalid,
    ModelRequestRefused,
    ModelThrottled,
)
from shared.graph.nodes.classification import Classification
from shared.graph.nodes.planning import Plan
from shared.model_catalog import DEFAULT_MODELS
from shared.ports import ChatTurn, LLMRequest, Usage
from testkit.vertex_server import (
    FakeVertexServer,
    error_reply,
    finish_reply,
    json_reply,
    stream_reply,
    text_reply,
    throttled_reply,
)

MODELS = "/v1beta1/projects/test-project/locations/europe-west4/publishers/google/models/"


@pytest.fixture(autouse=True)
def allow_model_requests() -> Iterator[None]:
    with model_guard.override_allow_model_requests(True):
        yield


@pytest.fixture
def fake() -> Iterator[FakeVertexServer]:
    with FakeVertexServer(token="t", today=date(2026, 11, 27)) as server:
        yield server
    assert server.pending == 0, "a scripted reply was never requested"


def client_for(fake: FakeVertexServer) -> object:
    settings = Settings(
        model_provider="vertex",
        gcp_project="test-project",
        vertex_location="europe-west4",
        vertex_base_url=fake.base_url,
        vertex_access_token=fake.token,
    )
    return build_vertex_client(settings)


@pytest.fixture
def waits() -> list[float]:
    return []


@pytest.fixture
def llm(fake: FakeVertexServer, waits: list[float]) -> VertexLLM:
    return VertexLLM(client_for(fake), dict(DEFAULT_MODELS), sleep=waits.append)  # type: ignore[arg-type]


def ask(text: str = "Hi", kind: str = "reply") -> LLMRequest:
    return LLMRequest(messages=[ChatTurn(role="user", text=text)], kind=kind)  # type: ignore[arg-type]


def raw(fake: FakeVertexServer, model: str, rpc: str, body: dict[str, object]) -> httpx.Response:
    headers = {"Authorization": f"Bearer {fake.token}"}
    return httpx.post(f"{fake.base_url}{MODELS}{model}:{rpc}", json=body, headers=headers)


def client_sees(error: AppError) -> tuple[int, str]:
    return error.status, error.code


# What the faithful fake refuses, as Vertex does -------------------------------------------

USER_HI = {"role": "user", "parts": [{"text": "Hi"}]}


@pytest.mark.parametrize(
    ("model", "body", "status", "says"),
    [
        ("gemini-3.5-flash", {"contents": [USER_HI, {"role": "model", "parts": [{"text": ""}]}]},
         400, "empty text"),
        ("gemini-2.5-flash", {"contents": [USER_HI]}, 404, "retired 2026-10-16"),
        ("gemini-9-ultra", {"contents": [USER_HI]}, 404, "not found"),
        ("gemini-3.5-flash", {"contents": [USER_HI], "generationConfig": {
            "thinkingConfig": {"thinkingLevel": "LOW", "thinkingBudget": 0}}}, 400, "both"),
        ("gemini-3.5-flash", {"contents": [USER_HI], "generationConfig": {
            "thinkingConfig": {"thinking_level": "LOW", "thinking_budget": 0}}}, 400, "both"),
        ("gemini-3.5-flash", {"contents": [USER_HI], "generationConfig": {
            "thinkingConfig": {"thinkingLevel": "XHIGH"}}}, 400, "not supported"),
        ("gemini-3.5-flash", {"contents": [USER_HI], "generationConfig": {
            "responseMimeType": "application/json",
            "responseJsonSchema": Classification.model_json_schema()}}, 400, "maxLength"),
        ("gemini-3.5-flash", {"contents": [USER_HI], "generationConfig": {
            "responseMimeType": "application/json", "responseJsonSchema": {
                "type": "object", "properties": {"a": {"$ref": "#/$defs/A", "title": "A"}},
                "$defs": {"A": {"type": "string"}}}}}, 400, "$ref with sibling keys"),
    ],
)  # fmt: skip
def test_the_fake_refuses_what_vertex_refuses_with_its_error_body(
    fake: FakeVertexServer, model: str, body: dict[str, object], status: int, says: str
) -> None:
    answer = raw(fake, model, "generateContent", body)

    assert answer.status_code == status
    error = answer.json()["error"]
    assert error["code"] == status
    assert error["status"] == {400: "INVALID_ARGUMENT", 404: "NOT_FOUND"}[status]
    assert says in error["message"]


def test_the_fake_refuses_an_embedding_batch_over_the_models_limit(fake: FakeVertexServer) -> None:
    two = {"requests": [{"content": {"parts": [{"text": t}]}} for t in ("a", "b")]}

    answer = raw(fake, "gemini-embedding-001", "batchEmbedContents", two)

    assert (answer.status_code, answer.json()["error"]["status"]) == (400, "INVALID_ARGUMENT")


def test_gemini_like_accepts_length_and_pattern_keywords_and_ignores_them() -> None:
    schema = {"type": "string", "maxLength": 3, "pattern": "^a$"}
    body = {"contents": [USER_HI], "generationConfig": {
        "responseMimeType": "application/json", "responseJsonSchema": schema}}  # fmt: skip
    with FakeVertexServer(token="t", gemini_like=True) as gemini:
        gemini.add(json_reply("far too long"))  # type: ignore[arg-type]
        answer = raw(gemini, "gemini-3.5-flash", "generateContent", body)
    assert answer.status_code == 200


# What the product sends: nothing the fake refuses ------------------------------------------


def test_an_old_empty_message_is_left_out_of_the_history(
    fake: FakeVertexServer, llm: VertexLLM
) -> None:
    fake.add(text_reply("Fine."))
    history = [ChatTurn(role="user", text="Hi"), ChatTurn(role="assistant", text=" ")]
    request = LLMRequest(messages=[*history, ChatTurn(role="user", text="Again?")])

    assert llm.generate(request).text == "Fine."
    sent = fake.requests[0].body["contents"]
    assert [c["parts"][0]["text"] for c in sent] == ["Hi", "Again?"]


def test_each_kind_goes_to_its_model_with_one_thinking_field(
    fake: FakeVertexServer, llm: VertexLLM
) -> None:
    fake.add(json_reply(CLASSIFIED), text_reply("Sure."))

    llm.structured(ask(kind="routing"), Classification)
    llm.generate(ask(kind="planning"))

    routing, planning = fake.requests
    assert routing.model == "gemini-3.5-flash-lite" and planning.model == "gemini-3.5-flash"
    thinking = [r.body["generationConfig"]["thinkingConfig"] for r in fake.requests]
    assert thinking == [{"thinking_level": "MINIMAL"}, {"thinking_level": "LOW"}]


def test_every_response_schema_is_sent_as_gemini_takes_it(
    fake: FakeVertexServer, llm: VertexLLM
) -> None:
    fake.add(json_reply(CLASSIFIED), json_reply(PLAN))

    llm.structured(ask(kind="routing"), Classification)
    plan, _ = llm.structured(ask(kind="planning"), Plan)

    assert plan.steps[0].id == "s1"
    for request in fake.requests:
        schema = str(request.body["generationConfig"]["responseJsonSchema"])
        assert "$ref" not in schema and "maxLength" not in schema and "pattern" not in schema
    step = fake.requests[1].body["generationConfig"]["responseJsonSchema"]["properties"]
    item = step["steps"]["items"]["properties"]
    assert item["id"]["enum"][:2] == ["s1", "s2"] and "research" in item["agent"]["enum"]


def test_an_over_long_goal_is_trimmed_not_refused(fake: FakeVertexServer, llm: VertexLLM) -> None:
    long_goal = {"steps": [{**PLAN["steps"][0], "goal": "look it up " * 80}]}
    fake.add(json_reply(long_goal))

    plan, _ = llm.structured(ask(kind="planning"), Plan)

    assert len(plan.steps[0].goal) <= 500 and plan.steps[0].goal.startswith("look it up")


def test_an_over_long_language_code_is_refused_not_cut(
    fake: FakeVertexServer, llm: VertexLLM
) -> None:
    fake.add(json_reply({**CLASSIFIED, "language": "english"}))

    with pytest.raises(ModelOutputInvalid):
        llm.structured(ask(kind="routing"), Classification)


# The product's answer to each failure -----------------------------------------------------


def test_a_retired_model_is_model_not_found_and_an_operator_error(
    fake: FakeVertexServer, caplog: pytest.LogCaptureFixture
) -> None:
    retired = VertexLLM(client_for(fake), "gemini-2.5-flash")  # type: ignore[arg-type]

    with caplog.at_level(logging.ERROR, logger="models"), pytest.raises(ModelNotFound) as found:
        retired.generate(ask())
    assert client_sees(found.value) == (503, "model_not_found")
    assert "404" in caplog.records[0].getMessage()


def test_a_400_is_model_request_refused(fake: FakeVertexServer, llm: VertexLLM) -> None:
    fake.add(error_reply(400, "Request contains an invalid argument."))

    with pytest.raises(ModelRequestRefused) as refused:
        llm.generate(ask())
    assert client_sees(refused.value) == (502, "model_request_refused")


def test_a_429_with_a_short_retry_delay_is_waited_out_within_the_call(
    fake: FakeVertexServer, llm: VertexLLM, waits: list[float]
) -> None:
    fake.add(throttled_reply(2), text_reply("after the wait"))

    assert llm.generate(ask()).text == "after the wait"
    assert waits == [2.0]


def test_a_429_with_a_long_retry_delay_is_model_throttled_with_retry_after(
    fake: FakeVertexServer, llm: VertexLLM, waits: list[float]
) -> None:
    fake.add(throttled_reply(30))

    with pytest.raises(ModelThrottled) as throttled:
        llm.generate(ask())
    assert client_sees(throttled.value) == (503, "model_throttled")
    assert throttled.value.retry_after == 30 and waits == []


def test_a_throttled_stream_is_waited_out_before_its_first_event(
    fake: FakeVertexServer, llm: VertexLLM, waits: list[float]
) -> None:
    fake.add(throttled_reply(1), stream_reply(["Hel", "lo"]))

    assert "".join(c.text for c in llm.stream(ask())) == "Hello"
    assert waits == [1.0]


@pytest.mark.parametrize("status", [500, 503])
def test_server_errors_are_dependency_unavailable(
    fake: FakeVertexServer, llm: VertexLLM, status: int
) -> None:
    fake.add(error_reply(status), error_reply(status))  # the SDK tries twice

    with pytest.raises(DependencyUnavailable) as unavailable:
        llm.generate(ask())
    assert client_sees(unavailable.value) == (503, "dependency_unavailable")


@pytest.mark.parametrize("reason", ["SAFETY", "RECITATION", "PROHIBITED_CONTENT"])
def test_a_refusing_finish_reason_is_model_declined(
    fake: FakeVertexServer, llm: VertexLLM, reason: str
) -> None:
    fake.add(finish_reply(reason), finish_reply(reason))

    with pytest.raises(ModelDeclined) as declined:
        llm.generate(ask())
    assert (declined.value.reason, client_sees(declined.value)) == (reason, (422, "model_declined"))
    with pytest.raises(ModelDeclined):
        list(llm.stream(ask()))


def test_max_tokens_keeps_what_was_said_and_an_empty_one_is_output_invalid(
    fake: FakeVertexServer, llm: VertexLLM
) -> None:
    fake.add(finish_reply("MAX_TOKENS", "Half a"), finish_reply("MAX_TOKENS", thoughts=100))

    assert llm.generate(ask()).text == "Half a"
    with pytest.raises(ModelOutputInvalid, match="MAX_TOKENS"):
        llm.generate(ask())


def test_thought_tokens_are_counted_as_billed_output(
    fake: FakeVertexServer, llm: VertexLLM
) -> None:
    fake.add(finish_reply("STOP", "Two words", thoughts=40))

    assert llm.generate(ask()).usage == Usage(input_tokens=5, output_tokens=42, thought_tokens=40)


CLASSIFIED = {
    "route": "simple",
    "has_extractable_facts": False,
    "has_preferences": False,
    "needs_semantic_retrieval": False,
    "needs_temporal_retrieval": False,
    "language": "en",
}
PLAN = {"steps": [{"id": "s1", "agent": "research", "goal": "find the opening hours"}]}
