"""The turn service on fakes: routes, idempotency, hand-offs, refusals."""

from __future__ import annotations

import json

import pytest

from shared.adapters.scripted_llm import ScriptedLLM
from shared.deps import Deps
from shared.errors import (
    DependencyUnavailable,
    MessageTooLong,
    NotFound,
    RateLimited,
    TurnInProgress,
)
from shared.graph.nodes.classify import Classification
from shared.models.domain import AgentJob, ExtractionTask
from shared.models.wire import TurnRequest
from shared.services.turn import Chunk, Done, TurnService


def classification(route: str = "simple", facts: bool = False) -> Classification:
    return Classification(
        route=route,
        has_extractable_facts=facts,
        has_preferences=False,
        needs_semantic_retrieval=False,
        needs_temporal_retrieval=False,
        entities=[],
        language="en",
    )


def request(message: str, cmid: str = "m1", chat_id: str | None = None) -> TurnRequest:
    return TurnRequest(message=message, client_message_id=cmid, chat_id=chat_id)


def test_greeting_skips_the_model_and_memory(deps: Deps, llm: ScriptedLLM) -> None:
    response = TurnService(deps).run("alice", request("Hi!"))
    assert "help" in response.reply.text
    assert llm.calls == []
    assert deps.tasks.tasks == []  # type: ignore[attr-defined]
    stored = deps.conversations.recent_messages("alice", response.chat_id, 10)
    assert [m.role for m in stored] == ["user", "assistant"]


def test_simple_turn_streams_the_model_reply_and_enqueues_extraction(
    deps: Deps, llm: ScriptedLLM
) -> None:
    llm.add(classification(facts=True), "Noted: your sister Anna lives in Bern.")
    service = TurnService(deps)
    events = list(service.events(service.prepare("alice", request("My sister Anna lives in Bern"))))
    chunks = [e.text for e in events if isinstance(e, Chunk)]
    assert len(chunks) > 1 and "".join(chunks) == "Noted: your sister Anna lives in Bern."
    done = events[-1]
    assert isinstance(done, Done)
    [task] = deps.tasks.tasks  # type: ignore[attr-defined]
    payload = ExtractionTask.model_validate_json(task.body)
    assert payload.turn_id == done.response.turn_id
    assert task.name == f"extract-{done.response.turn_id}"
    assert payload.text == "My sister Anna lives in Bern"


def test_complex_turn_publishes_an_agent_job(deps: Deps, llm: ScriptedLLM) -> None:
    llm.add(classification(route="complex"))
    response = TurnService(deps).run("alice", request("Plan my trip to Rome"))
    assert response.reply.kind == "progress"
    [message] = deps.publisher.messages  # type: ignore[attr-defined]
    job = AgentJob.model_validate_json(message.data)
    assert (job.user_id, job.chat_id, job.goal) == (
        "alice",
        response.chat_id,
        "Plan my trip to Rome",
    )
    assert message.attributes == {"job_id": job.job_id}


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
    assert [t.text for t in answer_call.request.messages][:2] == [
        "Hello",
        first.reply.text,
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


def test_failure_releases_the_claim_and_writes_nothing(deps: Deps, llm: ScriptedLLM) -> None:
    llm.add(classification(), DependencyUnavailable("model down"))
    service = TurnService(deps)
    with pytest.raises(DependencyUnavailable):
        service.run("alice", request("What's up?", cmid="retry-me"))
    llm.add(classification(), "All good.")
    response = service.run("alice", request("What's up?", cmid="retry-me"))
    assert response.reply.text == "All good."
    assert len(deps.conversations.recent_messages("alice", response.chat_id, 10)) == 2


def test_invalid_classification_is_retried_once(deps: Deps, llm: ScriptedLLM) -> None:
    llm.add(json.dumps({"route": "weird"}), classification(), "Fine.")
    assert TurnService(deps).run("alice", request("How are you?")).reply.text == "Fine."
