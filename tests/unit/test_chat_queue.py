"""Double texting on one chat (in process, on the fakes, with real threads): one turn at a
time, replies in the order of arrival, each turn seeing the one before; ``reject`` refuses,
``interrupt`` stops the running reply; a crashed holder's lease lets the next one go."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from shared.adapters.clock import SystemClock
from shared.app.turn import TurnService
from shared.config import Settings
from shared.deps import Deps
from shared.errors import ChatBusy
from shared.fakes.scripted_llm import HashEmbedder, ScriptedLLM
from shared.models.wire import TurnRequest, TurnResponse
from shared.ports import LLMRequest
from testkit.fakes import in_memory_stores
from tests.unit.turn_kit import classification


def answer(request: LLMRequest, schema: Any) -> Any:
    if schema is not None:
        return classification()
    return f"Reply to {request.messages[-1].text}, with some more words to stream"


def deps_with(llm: ScriptedLLM, **settings: Any) -> Deps:
    clock = SystemClock()  # leases and message times move on
    config = Settings(env="test", model_provider="scripted", **settings)
    return Deps(
        config, clock=clock, llm=llm, embedder=HashEmbedder(dimension=64),
        **in_memory_stores(clock),
    )  # fmt: skip


def message(text: str, cmid: str, chat_id: str | None, strategy: str = "enqueue") -> TurnRequest:
    return TurnRequest.model_validate(
        {"message": text, "client_message_id": cmid, "chat_id": chat_id,
         "multitask_strategy": strategy}
    )  # fmt: skip


def start_chat(deps: Deps) -> str:
    return TurnService(deps).run("alice", message("Hello", "m0", None)).chat_id


def send_at_once(deps: Deps, requests: list[TurnRequest]) -> list[TurnResponse]:
    gate = threading.Barrier(len(requests))

    def send(request: TurnRequest) -> TurnResponse:
        gate.wait()
        return TurnService(deps).run("alice", request)

    with ThreadPoolExecutor(len(requests)) as pool:
        return list(pool.map(send, requests))


def test_three_messages_at_once_are_answered_one_after_the_other_in_arrival_order() -> None:
    llm = ScriptedLLM(handler=answer, chunk_seconds=0.01)
    deps = deps_with(llm)
    chat = start_chat(deps)
    texts = ["first question", "second question", "third question"]
    send_at_once(deps, [message(t, f"m{n}", chat) for n, t in enumerate(texts, 1)])

    arrival = {
        text: deps.conversations.get_turn("alice", f"m{n}").arrival  # type: ignore[union-attr]
        for n, text in enumerate(texts, 1)
    }
    in_order = sorted(texts, key=lambda text: arrival[text] or 0)
    replies = [
        m.text
        for m in deps.conversations.recent_messages("alice", chat, 20)
        if m.role == "assistant"
    ][1:]  # after the greeting
    assert replies == [answer(LLMRequest(messages=[_turn(t)]), None) for t in in_order]
    streamed = [r for r in llm.calls if r.kind == "stream"]
    for earlier, call in enumerate(streamed):
        seen = [turn.text for turn in call.request.messages]
        assert [t for t in in_order if t in seen] == in_order[: earlier + 1]


def _turn(text: str) -> Any:
    from shared.ports import ChatTurn

    return ChatTurn(role="user", text=text)


def test_reject_refuses_while_another_turn_runs_and_writes_nothing() -> None:
    llm = ScriptedLLM(handler=answer, chunk_seconds=0.05)
    deps = deps_with(llm)
    chat = start_chat(deps)
    running = threading.Thread(
        target=TurnService(deps).run, args=("alice", message("long one", "m1", chat))
    )
    running.start()
    _wait_until_held(deps, chat)
    with pytest.raises(ChatBusy) as busy:
        TurnService(deps).run("alice", message("now!", "m2", chat, "reject"))
    running.join(30)
    assert busy.value.retry_after == 2
    assert deps.conversations.get_turn("alice", "m2") is None


def test_interrupt_stops_the_running_reply_which_keeps_its_part_and_hands_nothing_off() -> None:
    llm = ScriptedLLM(handler=_with_facts, chunk_seconds=0.1)
    deps = deps_with(llm, turn_heartbeat_seconds=0.05)
    chat = start_chat(deps)
    first: list[TurnResponse] = []
    running = threading.Thread(
        target=lambda: first.append(TurnService(deps).run("alice", message("tell", "m1", chat)))
    )
    running.start()
    _wait_until_streaming(llm)
    second = TurnService(deps).run("alice", message("stop, this instead", "m2", chat, "interrupt"))
    running.join(30)
    assert first[0].reply.kind == "interrupted"
    full = answer(LLMRequest(messages=[_turn("tell")]), None)
    partial = first[0].reply.text
    assert partial and full.startswith(partial) and partial != full
    assert second.reply.kind == "text"
    queued = [task.name for task in deps.tasks.tasks]  # type: ignore[attr-defined]
    assert queued == [f"extract-{second.turn_id}"]  # none of the interrupted turn
    record = deps.conversations.get_turn("alice", "m1")
    assert record is not None and record.metadata is not None
    assert record.metadata.outcome == "interrupted"


def _with_facts(request: LLMRequest, schema: Any) -> Any:
    if schema is not None:
        return classification(facts=True)
    return answer(request, schema)


def test_a_wait_in_vain_leaves_the_queue_and_the_message_can_be_sent_again() -> None:
    llm = ScriptedLLM(handler=answer, chunk_seconds=0.05)
    deps = deps_with(llm, chat_wait_seconds=0.3)
    chat = start_chat(deps)
    running = threading.Thread(
        target=TurnService(deps).run, args=("alice", message("long one", "m1", chat))
    )
    running.start()
    _wait_until_held(deps, chat)
    with pytest.raises(ChatBusy):
        TurnService(deps).run("alice", message("later", "m2", chat))
    running.join(30)
    held = deps.conversations.get_chat("alice", chat)
    assert held is not None and held.run.queue == [] and held.run.turn_id is None
    again = TurnService(deps).run("alice", message("later", "m2", chat))
    assert again.reply.kind == "text"


def test_a_crashed_holder_lets_the_next_turn_go_when_its_lease_runs_out() -> None:
    deps = deps_with(ScriptedLLM(handler=answer), turn_lease_seconds=3)
    chat = start_chat(deps)
    now = deps.clock.now()
    crashed = deps.conversations.claim_turn(
        "alice", "m1", chat, "t-crashed", now, 3, new_chat=False, owner="gone-process"
    )
    assert crashed.status == "new"  # it holds the chat, and will never beat again
    response = TurnService(deps).run("alice", message("anyone there?", "m2", chat))
    assert response.reply.kind == "text"


def _wait_until_held(deps: Deps, chat: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = deps.conversations.get_chat("alice", chat)
        if found is not None and found.run.turn_id is not None:
            return
        time.sleep(0.01)
    raise AssertionError("the first turn never held the chat")


def _wait_until_streaming(llm: ScriptedLLM) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if any(c.kind == "stream" for c in llm.calls):  # the greeting streams nothing
            return
        time.sleep(0.01)
    raise AssertionError("the first turn never started its reply")
