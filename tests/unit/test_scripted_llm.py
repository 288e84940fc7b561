"""The scripted test model, the provider switch and the guard against real model calls."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from shared.adapters import model_guard
from shared.adapters.local_embedder import LocalEmbedder
from shared.config import Settings
from shared.deps.models import build_models
from shared.errors import DependencyUnavailable, ModelOutputInvalid
from shared.fakes.scripted_llm import HashEmbedder, ScriptedLLM, ScriptExhausted
from shared.ports import ChatTurn, LLMRequest, StreamChunk, Usage


class Answer(BaseModel):
    verdict: str
    score: int


def ask(text: str = "Is it raining?", system: str = "") -> LLMRequest:
    return LLMRequest(system=system, messages=[ChatTurn(role="user", text=text)])


def test_generate_answers_in_script_order_and_records_each_request() -> None:
    llm = ScriptedLLM(["first", "second"])

    assert llm.generate(ask("one")).text == "first"
    assert llm.generate(ask("two")).text == "second"
    assert [r.messages[0].text for r in llm.requests] == ["one", "two"]
    assert [c.kind for c in llm.calls] == ["generate", "generate"]


def test_generate_reports_deterministic_word_counts_as_usage() -> None:
    llm = ScriptedLLM(["three words here"])

    generation = llm.generate(ask("how are you", system="be brief"))

    assert generation.usage == Usage(input_tokens=5, output_tokens=3)


def test_stream_splits_the_text_into_several_chunks_with_usage_last() -> None:
    llm = ScriptedLLM(["It will rain at noon."])

    chunks = list(llm.stream(ask()))

    assert len(chunks) > 2
    assert "".join(c.text for c in chunks) == "It will rain at noon."
    assert all(c.usage is None for c in chunks[:-1])
    assert chunks[-1] == StreamChunk(usage=Usage(input_tokens=3, output_tokens=5))


def test_stream_groups_words_when_asked() -> None:
    llm = ScriptedLLM(["a b c d e"], words_per_chunk=2)

    texts = [c.text for c in llm.stream(ask()) if c.text]

    assert texts == ["a b ", "c d ", "e"]


@pytest.mark.parametrize(
    "reply",
    [Answer(verdict="yes", score=3), {"verdict": "yes", "score": 3}, '{"verdict":"yes","score":3}'],
    ids=["model", "dict", "json"],
)
def test_structured_accepts_a_model_a_dict_or_json_text(reply: object) -> None:
    llm = ScriptedLLM([reply])  # type: ignore[list-item]

    value, usage = llm.structured(ask(), Answer)

    assert value == Answer(verdict="yes", score=3)
    assert usage.output_tokens > 0
    assert llm.calls[0].schema is Answer


@pytest.mark.parametrize("reply", [{"verdict": "yes"}, "not json", '{"verdict": 1, "score": 2}'])
def test_structured_reply_that_breaks_the_schema_is_model_output_invalid(reply: object) -> None:
    llm = ScriptedLLM([reply])  # type: ignore[list-item]

    with pytest.raises(ModelOutputInvalid):
        llm.structured(ask(), Answer)


def test_an_empty_script_is_an_error_never_an_invented_answer() -> None:
    llm = ScriptedLLM(["only one"])
    llm.generate(ask())

    with pytest.raises(ScriptExhausted, match="call #2"):
        llm.generate(ask())
    with pytest.raises(ScriptExhausted):
        list(llm.stream(ask()))
    with pytest.raises(ScriptExhausted):
        llm.structured(ask(), Answer)


def test_handler_answers_once_the_queue_is_empty_and_sees_the_schema() -> None:
    seen: list[type[BaseModel] | None] = []

    def handler(request: LLMRequest, schema: type[BaseModel] | None) -> str | dict[str, object]:
        seen.append(schema)
        if schema is None:
            return f"echo: {request.messages[-1].text}"
        return {"verdict": "handled", "score": 1}

    llm = ScriptedLLM(["queued"], handler=handler)

    assert llm.generate(ask("a")).text == "queued"
    assert llm.generate(ask("b")).text == "echo: b"
    assert llm.structured(ask(), Answer)[0].verdict == "handled"
    assert seen == [None, Answer]


def test_a_scripted_exception_is_raised_so_error_paths_can_be_tested() -> None:
    llm = ScriptedLLM([DependencyUnavailable("vertex down"), "recovered"])

    with pytest.raises(DependencyUnavailable):
        llm.generate(ask())
    assert llm.generate(ask()).text == "recovered"


def test_a_text_call_refuses_a_structured_reply() -> None:
    llm = ScriptedLLM([{"verdict": "yes", "score": 1}])

    with pytest.raises(TypeError, match="needs a str reply"):
        llm.generate(ask())


def test_add_appends_to_the_script() -> None:
    llm = ScriptedLLM()
    llm.add("x", "y")

    assert llm.pending == 2
    assert [llm.generate(ask()).text for _ in range(2)] == ["x", "y"]


def test_scripted_provider_builds_the_test_model_and_hash_embedder() -> None:
    llm, embedder = build_models(Settings(model_provider="scripted", embedding_dimension=64))

    assert isinstance(llm, ScriptedLLM)
    assert isinstance(embedder, HashEmbedder)
    assert embedder.dimension == 64
    with pytest.raises(ScriptExhausted):
        llm.generate(ask())


def test_guard_blocks_the_in_process_embedder_before_it_loads() -> None:
    with (
        model_guard.override_allow_model_requests(False),
        pytest.raises(model_guard.ModelRequestsBlocked),
    ):
        LocalEmbedder().embed(["x"])


def test_guard_override_restores_the_previous_value() -> None:
    before = model_guard.ALLOW_MODEL_REQUESTS
    with model_guard.override_allow_model_requests(not before):
        assert model_guard.ALLOW_MODEL_REQUESTS is (not before)
    assert model_guard.ALLOW_MODEL_REQUESTS is before


def test_guard_never_blocks_the_scripted_model() -> None:
    with model_guard.override_allow_model_requests(False):
        assert ScriptedLLM(["ok"]).generate(ask()).text == "ok"
        assert len(HashEmbedder(16).embed(["ok"])[0]) == 16
