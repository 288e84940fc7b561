"""The turn service on fakes: idempotency, refusals, failures, streaming, budget."""

from __future__ import annotations

import json

import pytest

from shared.app.turn import Chunk, Done, TurnService
from shared.config import Settings
from shared.deps import Deps
from shared.errors import (
    DependencyUnavailable,
    MessageTooLong,
    NotFound,
    RateLimited,
    TurnInProgress,
)
from shared.fakes.scripted_llm import ScriptedLLM
from tests.unit.turn_kit import classification, metadata, nodes, request


def test_repeated_client_message_id_replays_without_running_again(
    deps: Deps, llm: ScriptedLLM
) -> None:
    llm.add(classification(facts=True), "First answer.")
    service = TurnService(deps)
    first = service.run("alice", request("I moved to Basel", cmid="same"))
    again = service.run("alice", request("I moved to Basel", cmid="same"))
    assert again == first
    assert len(llm.calls) == 2  # classify + answer, once
    assert len(deps.tasks.tasks) == 1  # type: ignore[attr-defined]
    assert len(deps.conversations.recent_messages("alice", first.chat_id, 10)) == 2


def test_a_turn_still_running_is_refused(deps: Deps) -> None:
    service = TurnService(deps)
    service.prepare("alice", request("Hello", cmid="busy"))  # claimed, never finished
    with pytest.raises(TurnInProgress):
        service.prepare("alice", request("Hello", cmid="busy"))


def test_follow_up_turn_sees_history_in_the_same_chat(deps: Deps, llm: ScriptedLLM) -> None:
    service = TurnService(deps)
    first = service.run("alice", request("Hello"))
    llm.add(classification(), "Sure.")
    service.run("alice", request("Can you help?", cmid="m2", chat_id=first.chat_id))
    answer_call = llm.calls[-1]
    assert [t.text for t in answer_call.request.messages] == [
        "Hello",
        first.reply.text,
        "Can you help?",
    ]


def test_another_users_chat_is_not_found(deps: Deps) -> None:
    chat = TurnService(deps).run("alice", request("Hello")).chat_id
    with pytest.raises(NotFound):
        TurnService(deps).run("mallory", request("Hello", cmid="x", chat_id=chat))


def test_message_over_the_cap_is_refused_before_anything_is_stored(deps: Deps) -> None:
    with pytest.raises(MessageTooLong):
        TurnService(deps).run("alice", request("x" * 8001))
    response = TurnService(deps).run("alice", request("Hello"))  # "m1" was never claimed
    assert len(deps.conversations.recent_messages("alice", response.chat_id, 10)) == 2


def test_rate_limit_per_user(deps: Deps) -> None:
    service = TurnService(deps)
    for n in range(5):
        service.run("alice", request("Hello", cmid=f"r{n}"))
    with pytest.raises(RateLimited):
        service.run("alice", request("Hello", cmid="r5"))
    service.run("bob", request("Hello", cmid="r5"))  # other users are not affected


def test_a_failing_node_answers_with_the_fallback_and_records_the_failure(
    deps: Deps, llm: ScriptedLLM
) -> None:
    llm.add(classification(facts=True, language="de"), DependencyUnavailable("model down"))
    service = TurnService(deps)
    events = list(service.events(service.prepare("alice", request("Wie geht's?", cmid="f1"))))
    done = events[-1]
    assert isinstance(done, Done)
    assert done.response.reply.kind == "fallback"
    assert "Entschuldigung" in done.response.reply.text  # the chat's language
    assert isinstance(events[-2], Chunk) and events[-2].text == done.response.reply.text
    recorded = metadata(deps, "f1")
    assert (recorded.outcome, recorded.failed_node, recorded.error_code) == (
        "failed",
        "simple_text",
        "dependency_unavailable",
    )
    assert deps.tasks.tasks == []  # type: ignore[attr-defined]  # nothing handed off
    stored = deps.conversations.recent_messages("alice", done.response.chat_id, 10)
    assert [m.text for m in stored] == ["Wie geht's?", done.response.reply.text]
    assert service.run("alice", request("Wie geht's?", cmid="f1")) == done.response  # replay


class _BrokenStore:
    """Completes nothing: the turn's own record cannot be written."""

    def __init__(self, inner: object) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)

    def complete_turn(self, *args: object, **kwargs: object) -> None:
        raise DependencyUnavailable("firestore down")


def test_when_the_record_cannot_be_written_the_claim_is_released(
    deps: Deps, llm: ScriptedLLM
) -> None:
    healthy = deps.conversations
    deps.__dict__["conversations"] = _BrokenStore(healthy)
    llm.add(classification(), "Answer.")
    with pytest.raises(DependencyUnavailable):
        TurnService(deps).run("alice", request("What's up?", cmid="retry-me"))
    deps.__dict__["conversations"] = healthy
    llm.add(classification(), "All good.")
    response = TurnService(deps).run("alice", request("What's up?", cmid="retry-me"))
    assert response.reply.text == "All good."
    assert len(deps.conversations.recent_messages("alice", response.chat_id, 10)) == 2


def test_invalid_classification_is_retried_once(deps: Deps, llm: ScriptedLLM) -> None:
    llm.add(json.dumps({"route": "weird"}), classification(), "Fine.")
    assert TurnService(deps).run("alice", request("How are you?")).reply.text == "Fine."


def test_classification_invalid_twice_fails_the_node_clearly(deps: Deps, llm: ScriptedLLM) -> None:
    llm.add(json.dumps({"route": "weird"}), json.dumps({"route": "odd"}))
    response = TurnService(deps).run("alice", request("How are you?", cmid="bad"))
    assert response.reply.kind == "fallback"
    recorded = metadata(deps, "bad")
    assert (recorded.failed_node, recorded.error_code) == ("classify", "model_output_invalid")


def test_tokens_stream_as_the_model_produces_them(deps: Deps, llm: ScriptedLLM) -> None:
    llm.add(classification(), "One two three four.")
    service = TurnService(deps)
    events = list(service.events(service.prepare("alice", request("Count?"))))
    chunks = [e.text for e in events if isinstance(e, Chunk)]
    assert chunks == ["One ", "two ", "three ", "four."]


def test_the_turn_budget_stops_model_calls(deps: Deps, llm: ScriptedLLM) -> None:
    tight = Deps(
        Settings(env="test", model_provider="scripted", turn_token_budget=60),
        **{k: v for k, v in deps.__dict__.items() if k != "settings"},
    )
    llm.add(classification(), "never sent")
    response = TurnService(tight).run("alice", request("Tell me a long story " * 10))
    assert response.reply.kind == "fallback"
    recorded = metadata(tight, "m1")
    assert (recorded.failed_node, recorded.error_code) == ("simple_text", "turn_budget_exceeded")
    assert [c.kind for c in llm.calls] == ["structured"]  # the answer was never asked for
    assert recorded.input_tokens + recorded.output_tokens >= 60


def test_metadata_records_route_flags_tokens_and_cost(deps: Deps, llm: ScriptedLLM) -> None:
    llm.add(classification(facts=True), "Noted.")
    TurnService(deps).run("alice", request("I love hiking", cmid="meta"))
    recorded = metadata(deps, "meta")
    assert recorded.route == "simple" and recorded.flags["has_extractable_facts"] is True
    assert recorded.input_tokens > 0 and recorded.output_tokens > 0
    assert recorded.cost_usd > 0
    assert recorded.extraction_enqueued is True
    assert "classify" in nodes(deps, "meta") and "simple_text" in nodes(deps, "meta")
    assert all(run.ms >= 0 for run in recorded.nodes)


def test_one_turn_done_line_carries_what_the_alerts_read(
    deps: Deps, llm: ScriptedLLM, caplog: pytest.LogCaptureFixture
) -> None:
    """terraform/monitoring.tf extracts route, graph_ms, ttft_ms and interrupted."""
    llm.add(classification(), "Fine.")
    with caplog.at_level("INFO", logger="turn"):
        TurnService(deps).run("alice", request("How are you?"))
    [line] = [r for r in caplog.records if r.getMessage() == "turn done"]
    fields = line.__dict__
    assert fields["route"] == "simple" and fields["interrupted"] is False
    assert 0 <= fields["ttft_ms"] <= fields["graph_ms"]
    assert fields["outcome"] == "ok"
    # the reply's length beside the turn's tokens (bench.turn --local compares replies by it)
    assert 0 < fields["output_tokens"] < fields["tokens"]


def test_a_question_whose_record_failed_is_asked_again_on_retry(
    deps: Deps, llm: ScriptedLLM
) -> None:
    plan = {"steps": [{"id": "s1", "agent": "productivity", "goal": "book the gym"}]}
    healthy = deps.conversations
    deps.__dict__["conversations"] = _BrokenStore(healthy)
    llm.add(classification("complex"), plan)
    with pytest.raises(DependencyUnavailable):  # the record failed: the claim is released
        TurnService(deps).run("alice", request("Book the gym", cmid="q1"))
    deps.__dict__["conversations"] = healthy
    llm.add(classification("complex"), plan)
    asked = TurnService(deps).run("alice", request("Book the gym", cmid="q1"))
    assert asked.interrupt is not None and asked.interrupt.kind == "approval"
    chat = healthy.get_chat("alice", asked.chat_id)
    assert chat is not None and chat.control.status == "pending"
    assert chat.control.interrupt.id == asked.interrupt.id
