"""A long free-text reply pauses for a short one and resumes from its text so far: the short
reply ends first, the long one's text is whole, in order and within its cap. Structured
calls and a service with slicing off run to their end. The asserts are about order and
content, never about how long anything took."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from google.genai import types
from pydantic import BaseModel

from scripts.model_service.service import Limits
from shared.adapters.vertex_llm import build_vertex_client
from shared.ports import ChatTurn, LLMRequest
from tests.unit.model_service.conftest import TEXT_MODEL, Running, ScriptedEngine, serving

LONG = ["tick "] * 60
SHORT = ["Yes."]


class Title(BaseModel):
    title: str


def until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 5
    while not condition():
        assert time.monotonic() < deadline, "never got there"
        time.sleep(0.001)


def ask(text: str, max_tokens: int = 500) -> LLMRequest:
    return LLMRequest(messages=[ChatTurn(role="user", text=text)], max_output_tokens=max_tokens)


def long_then_short(
    limits: Limits, long_call: Callable[[Running], str], pieces: list[str]
) -> tuple[list[str], dict[str, str], Running]:
    """The long call starts; once it has streamed 30 pieces, a short reply is asked."""
    engine = ScriptedEngine(seconds_per_piece=0.01, by_message={"long": pieces, "short": SHORT})
    finished: list[str] = []
    texts: dict[str, str] = {}
    with serving(engine, limits) as running:
        llm, _ = running.models()

        def run_long() -> None:
            texts["long"] = long_call(running)
            finished.append("long")

        first = threading.Thread(target=run_long)
        first.start()
        assert engine.started.wait(5)
        until(lambda: engine.emitted >= 30)
        texts["short"] = llm.generate(ask("short")).text
        finished.append("short")
        first.join(10)
    return finished, texts, running


def stream_long(running: Running) -> str:
    llm, _ = running.models()
    return "".join(chunk.text for chunk in llm.stream(ask("long", max_tokens=50)))


def test_a_long_reply_pauses_for_a_short_one_and_resumes_where_it_was() -> None:
    finished, texts, running = long_then_short(
        Limits(max_output_tokens=64, slice_tokens=24), stream_long, LONG
    )

    assert finished == ["short", "long"]
    assert texts == {"short": "Yes.", "long": "tick " * 50}  # whole, in order, its cap of 50
    calls = running.engine.calls
    resumed = [call for call in calls if call.prefill]
    assert resumed, "the long reply was never resumed"
    assert resumed[0].prefill == "tick " * (50 - resumed[0].max_tokens)  # continues its text
    assert [call.messages[-1][1] for call in calls[:3]] == ["long", "short", "long"]
    health = running.service.health()
    assert health["text_lane"]["paused"] >= 1
    assert health["finished"]["paused"] == health["text_lane"]["paused"]


def test_with_slicing_off_the_long_reply_runs_to_its_end_first() -> None:
    finished, texts, running = long_then_short(
        Limits(max_output_tokens=64, slice_tokens=0), stream_long, LONG
    )

    assert finished == ["long", "short"]
    assert texts["long"] == "tick " * 50
    assert not any(call.prefill for call in running.engine.calls)


def test_a_structured_call_is_never_paused() -> None:
    """Its grammar starts from the first character: it cannot resume from a prefix."""
    pieces = ['{"title": "', *(["a"] * 58), '"}']

    def structured(running: Running) -> str:
        llm, _ = running.models()
        value, _ = llm.structured(ask("long"), Title)
        return value.title

    finished, texts, running = long_then_short(
        Limits(max_output_tokens=64, slice_tokens=24), structured, pieces
    )

    assert finished == ["long", "short"]
    assert texts["long"] == "a" * 58
    assert not any(call.prefill for call in running.engine.calls)
    assert running.service.health()["text_lane"]["paused"] == 0


def test_a_paused_reply_that_waits_past_its_queue_time_ends_with_what_it_has() -> None:
    """Its first slice was admitted, so it is not refused: it answers its text so far with
    finish reason OTHER, as a generation stopped at its time limit does."""
    structured = ['{"title": "', *(["a"] * 150), '"}']  # never paused: 150 pieces in a row
    engine = ScriptedEngine(seconds_per_piece=0.01, by_message={"long": LONG, "json": structured})
    limits = Limits(max_output_tokens=500, max_queue_seconds=0.3, slice_tokens=24)
    answers: dict[str, types.GenerateContentResponse] = {}
    with serving(engine, limits) as running:
        client = build_vertex_client(running.settings())
        llm, _ = running.models()

        def generate_long() -> None:
            answers["long"] = client.models.generate_content(model=TEXT_MODEL, contents="long")

        first = threading.Thread(target=generate_long)
        first.start()
        until(lambda: engine.emitted >= 30)
        title, _ = llm.structured(ask("json"), Title)  # the paused reply waits past 0.3 s
        first.join(10)

    paused = answers["long"]
    assert paused.candidates and paused.candidates[0].finish_reason == types.FinishReason.OTHER
    text = paused.text or ""
    assert text == "tick " * text.count("tick ") and 24 <= text.count("tick ") < 60
    assert title.title == "a" * 150
