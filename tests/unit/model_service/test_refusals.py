"""The local model service refuses what Vertex refuses (``vertex_rules``), with Vertex's error
body, and in its Gemini-like mode ignores the schema keywords Gemini ignores."""

from __future__ import annotations

import dataclasses
import json

import httpx
import pytest

from scripts.model_service.service import Limits
from tests.unit.model_service.conftest import (
    EMBEDDING_MODEL,
    TEXT_MODEL,
    TOKEN,
    Running,
    ScriptedEngine,
    serving,
)

MODELS = "/v1beta1/projects/p/locations/l/publishers/google/models/"
HI = {"role": "user", "parts": [{"text": "Hi"}]}
BOUNDED = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 5, "pattern": "^[a-z]+$"}},
    "required": ["name"],
}


def post(running: Running, model: str, rpc: str, body: object) -> httpx.Response:
    return httpx.post(
        f"{running.url}{MODELS}{model}:{rpc}",
        content=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
        timeout=10,
    )


def json_output(schema: object) -> dict[str, object]:
    return {"responseMimeType": "application/json", "responseJsonSchema": schema}


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"contents": [HI, {"role": "model", "parts": [{"text": ""}]}]}, "empty text"),
        ({"contents": [HI], "generationConfig": {
            "thinkingConfig": {"thinkingLevel": "LOW", "thinkingBudget": 0}}}, "both"),
        ({"contents": [HI], "generationConfig": json_output(BOUNDED)}, "maxLength"),
    ],
)  # fmt: skip
def test_what_vertex_refuses_is_400_with_its_error_body(
    running: Running, body: dict[str, object], says: str
) -> None:
    answer = post(running, TEXT_MODEL, "generateContent", body)

    assert answer.status_code == 400
    error = answer.json()["error"]
    assert (error["code"], error["status"]) == (400, "INVALID_ARGUMENT")
    assert says in error["message"]
    assert running.engine.calls == []  # refused before the engine


def test_an_embedding_batch_over_the_models_limit_is_400(running: Running) -> None:
    texts = {"requests": [{"content": {"parts": [{"text": "x"}]}}] * 251}

    answer = post(running, EMBEDDING_MODEL, "batchEmbedContents", texts)

    assert answer.status_code == 400 and "250" in answer.json()["error"]["message"]


def test_gemini_like_drops_length_and_pattern_before_the_grammar(limits: Limits) -> None:
    gemini_like = dataclasses.replace(limits, gemini_like=True)
    with serving(ScriptedEngine(pieces=('{"name": "Far Too Long"}',)), gemini_like) as running:
        answer = post(
            running,
            TEXT_MODEL,
            "generateContent",
            {"contents": [HI], "generationConfig": json_output(BOUNDED)},
        )

    assert answer.status_code == 200
    (call,) = running.engine.calls
    assert call.schema == {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    }
