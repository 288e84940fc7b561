"""Vertex request bodies -> the engine's calls, and the JSON schema bound for the grammar."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field

from scripts.model_service import vertex_wire as wire
from scripts.model_service.calls import Outcome
from scripts.model_service.llama import bound_schema


def call_for(body: dict[str, Any], cap: int = 512) -> Any:
    return wire.chat_call(wire.parse(wire.GenerateRequest, body), cap)


def test_system_parts_roles_and_sampling_are_carried_over() -> None:
    call = call_for(
        {
            "contents": [
                {"role": "user", "parts": [{"text": "Hi "}, {"text": "there"}]},
                {"role": "model", "parts": [{"text": "Hello."}]},
            ],
            "systemInstruction": {"role": "user", "parts": [{"text": "A"}, {"text": "B"}]},
            "generationConfig": {
                "maxOutputTokens": 100, "temperature": 0.3, "topP": 0.9, "topK": 20,
                "stopSequences": ["END"], "seed": 7, "thinkingConfig": {"thinking_budget": 0},
            },
        }
    )  # fmt: skip

    assert call.system == "A\nB"
    assert call.messages == (("user", "Hi there"), ("assistant", "Hello."))
    assert (call.max_tokens, call.temperature, call.top_p, call.top_k) == (100, 0.3, 0.9, 20)
    assert (call.stop, call.seed, call.schema, call.json_mode) == (("END",), 7, None, False)


def test_max_tokens_default_to_and_never_exceed_the_cap() -> None:
    contents = [{"parts": [{"text": "x"}]}]

    assert call_for({"contents": contents}, cap=300).max_tokens == 300
    assert (
        call_for({"contents": contents, "generationConfig": {"maxOutputTokens": 9999}}).max_tokens
        == 512
    )


def test_the_priority_label_marks_background_work() -> None:
    contents = [{"role": "user", "parts": [{"text": "hi"}]}]
    labelled = {"contents": contents, "labels": {"work": "extraction", "priority": "background"}}
    assert wire.parse(wire.GenerateRequest, labelled).background
    assert not wire.parse(wire.GenerateRequest, {"contents": contents}).background


def test_json_output_with_and_without_a_schema() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    base = {"contents": [{"parts": [{"text": "x"}]}]}

    with_schema = call_for(
        {
            **base,
            "generationConfig": {
                "responseMimeType": "application/json",
                "responseJsonSchema": schema,
            },
        }
    )
    json_only = call_for({**base, "generationConfig": {"responseMimeType": "application/json"}})

    assert (with_schema.schema, with_schema.json_mode) == (schema, False)
    assert (json_only.schema, json_only.json_mode) == (None, True)
    with pytest.raises(wire.WireError, match="responseMimeType"):
        call_for({**base, "generationConfig": {"responseJsonSchema": schema}})


@pytest.mark.parametrize(
    "config",
    [{"responseSchema": {"type": "OBJECT"}}, {"responseMimeType": "image/png"}, {"topP": 0}],
    ids=["openapi-schema", "other-mime", "out-of-range"],
)
def test_what_the_service_cannot_honour_is_400(config: dict[str, Any]) -> None:
    with pytest.raises(wire.WireError) as raised:
        call_for({"contents": [{"parts": [{"text": "x"}]}], "generationConfig": config})
    assert raised.value.status == 400
    assert raised.value.body()["error"]["status"] == "INVALID_ARGUMENT"


def test_unknown_paths_are_404_and_model_paths_route() -> None:
    found = wire.route("/v1beta1/projects/p/locations/l/publishers/google/models/m-1:predict")

    assert (found.model, found.rpc) == ("m-1", "predict")
    with pytest.raises(wire.WireError) as raised:
        wire.route("/v1beta1/projects/p/models/m:generateContent")
    assert raised.value.status == 404


def test_finish_reasons_and_usage_in_vertex_terms() -> None:
    capped = wire.generate_response("partial", Outcome("deadline", 5, 2), "m", 1.5)
    done = wire.stream_event("", Outcome("length", 5, 9), "m", 0.0)

    assert capped["candidates"][0]["finishReason"] == "OTHER"
    assert "1.5 s" in capped["candidates"][0]["finishMessage"]
    assert capped["usageMetadata"] == {
        "promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7,
    }  # fmt: skip
    assert done["candidates"][0]["finishReason"] == "MAX_TOKENS"
    assert "finishReason" not in wire.stream_event("x", None, "m", 0.0)["candidates"][0]


class Answer(BaseModel):
    verdict: str
    score: int


class Nested(BaseModel):
    tags: list[str]
    limited: list[int] = Field(max_length=2)
    name: str
    kind: str = Field(pattern="^[a-z]+$")
    items: list[Answer]


def test_bound_schema_bounds_every_array_and_free_string_and_closes_objects() -> None:
    schema = bound_schema(Nested.model_json_schema(), max_items=5, max_length=50)

    props = schema["properties"]
    assert props["tags"]["maxItems"] == 5
    assert props["tags"]["items"]["maxLength"] == 50
    assert props["limited"]["maxItems"] == 2  # the schema's own bound wins
    assert props["name"]["maxLength"] == 50
    assert "maxLength" not in props["kind"]  # a pattern already constrains it
    assert props["items"]["maxItems"] == 5
    assert schema["additionalProperties"] is False
    assert schema["$defs"]["Answer"]["additionalProperties"] is False
    assert schema["$defs"]["Answer"]["properties"]["verdict"]["maxLength"] == 50
    assert "maxItems" not in Nested.model_json_schema()["properties"]["tags"]  # a copy
