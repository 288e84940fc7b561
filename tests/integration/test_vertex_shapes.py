"""Vertex's documented response shapes (tests/data/vertex_responses.json, its source named in
the file) through the real google-genai client and the adapter: thoughts are not text but are
billed, safety ratings and grounding metadata do not disturb the answer, a stream's last
usage counts, a blocked prompt or a SAFETY stop is declined, RetryInfo is read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shared.adapters import model_guard
from shared.adapters.vertex_client import build_vertex_client
from shared.adapters.vertex_failures import retry_delay
from shared.adapters.vertex_llm import VertexLLM
from shared.config import Settings
from shared.errors import ModelDeclined
from shared.ports import ChatTurn, LLMRequest, StreamChunk, Usage
from testkit.vertex_server import FakeReply, FakeVertexServer

SHAPES: dict[str, Any] = json.loads(Path("tests/data/vertex_responses.json").read_text())


@pytest.fixture(autouse=True)
def allow_model_requests() -> Iterator[None]:
    with model_guard.override_allow_model_requests(True):
        yield


@pytest.fixture
def fake() -> Iterator[FakeVertexServer]:
    with FakeVertexServer(token="t") as server:
        yield server


@pytest.fixture
def llm(fake: FakeVertexServer) -> VertexLLM:
    settings = Settings(
        model_provider="vertex", vertex_base_url=fake.base_url, vertex_access_token=fake.token
    )
    return VertexLLM(build_vertex_client(settings), settings.models())


ASK = LLMRequest(messages=[ChatTurn(role="user", text="When does the museum open?")])


def test_thoughts_are_left_out_of_the_text_and_billed_as_output(
    fake: FakeVertexServer, llm: VertexLLM
) -> None:
    fake.add(FakeReply(body=SHAPES["thinking_with_safety_and_grounding"]))

    generation = llm.generate(ASK)

    assert generation.text == "The museum opens at 10:00 on weekdays."
    assert generation.usage == Usage(input_tokens=31, output_tokens=11 + 96, thought_tokens=96)


def test_a_stream_yields_its_pieces_then_the_last_events_usage(
    fake: FakeVertexServer, llm: VertexLLM
) -> None:
    fake.add(FakeReply(events=tuple(SHAPES["stream"])))

    chunks = list(llm.stream(ASK))

    assert "".join(c.text for c in chunks) == "Anna's birthday is on 3 May."
    assert chunks[-1] == StreamChunk(
        usage=Usage(input_tokens=24, output_tokens=20, thought_tokens=12)
    )


@pytest.mark.parametrize(("shape", "reason"), [("blocked_prompt", "PROHIBITED_CONTENT"),
                                               ("safety_stop", "SAFETY")])  # fmt: skip
def test_a_blocked_prompt_and_a_safety_stop_are_declined(
    fake: FakeVertexServer, llm: VertexLLM, shape: str, reason: str
) -> None:
    fake.add(FakeReply(body=SHAPES[shape]))

    with pytest.raises(ModelDeclined) as declined:
        llm.generate(ASK)
    assert declined.value.reason == reason


def test_the_retry_delay_of_a_resource_exhausted_body_is_read() -> None:
    assert retry_delay(SHAPES["resource_exhausted"]) == 3.0
    assert retry_delay({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}}) is None
