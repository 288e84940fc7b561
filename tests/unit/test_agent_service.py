"""Agent jobs on fakes: claim once, expiry, release on transient failure, push decoding."""

from __future__ import annotations

import base64
from datetime import timedelta

import pytest

from shared.adapters.clock import FixedClock
from shared.adapters.scripted_llm import ScriptedLLM
from shared.deps import Deps
from shared.errors import DependencyUnavailable, InvalidEvent
from shared.models.domain import AgentJob
from shared.services.agents import AgentJobService, job_from_push


def job(clock: FixedClock, job_id: str = "t1-job0") -> AgentJob:
    return AgentJob(
        job_id=job_id,
        user_id="alice",
        chat_id="c1",
        turn_id="t1",
        agent="research",
        goal="Summarise my notes",
        created_at=clock.now(),
    )


@pytest.fixture(autouse=True)
def chat(deps: Deps, clock: FixedClock) -> None:
    deps.conversations.create_chat("alice", "c1", clock.now())


def test_a_job_runs_once_and_posts_its_result(
    deps: Deps, llm: ScriptedLLM, clock: FixedClock
) -> None:
    llm.add("Here is the summary.")
    service = AgentJobService(deps)
    assert service.run(job(clock), "m-1").status == "done"
    assert service.run(job(clock), "m-2").status == "duplicate"  # redelivery
    [message] = deps.conversations.recent_messages("alice", "c1", 10)
    assert (message.role, message.text) == ("assistant", "Here is the summary.")


def test_an_expired_job_is_dropped(deps: Deps, llm: ScriptedLLM, clock: FixedClock) -> None:
    old = job(clock)
    clock.advance(deps.settings.max_event_age_seconds + 1)
    assert AgentJobService(deps).run(old, "m-1").status == "expired"
    assert llm.calls == []


def test_a_transient_failure_releases_the_claim(
    deps: Deps, llm: ScriptedLLM, clock: FixedClock
) -> None:
    llm.add(DependencyUnavailable("model down"), "Done now.")
    service = AgentJobService(deps)
    with pytest.raises(DependencyUnavailable):
        service.run(job(clock), "m-1")
    clock.advance(timedelta(seconds=10).total_seconds())
    assert service.run(job(clock), "m-1").status == "done"


def test_push_payload_decoding(clock: FixedClock) -> None:
    payload = job(clock).model_dump_json().encode()
    data = {"message": {"data": base64.b64encode(payload).decode(), "messageId": "42"}}
    decoded, message_id = job_from_push(data)
    assert (decoded.job_id, message_id) == ("t1-job0", "42")
    for bad in (
        {},
        {"message": {"data": "!!!"}},
        {"message": {"data": base64.b64encode(b"{}").decode()}},
    ):
        with pytest.raises(InvalidEvent):
            job_from_push(bad)
