"""A fact conflict the extraction holds is put to the user and answered through resume."""

from __future__ import annotations

import pytest

from shared.app.extraction import ExtractionService
from shared.app.resume import ResumeService
from shared.deps import Deps
from shared.errors import InterruptNotPending
from shared.fakes.clock import FixedClock
from shared.fakes.scripted_llm import ScriptedLLM
from shared.models.memory import FactFilter
from shared.models.wire import ResumeRequest
from tests.unit.extraction_kit import USER, ScriptedModel, extraction, fact, task


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture
def llm(model: ScriptedModel) -> ScriptedLLM:
    return ScriptedLLM(handler=model)


def _conflict(deps: Deps, model: ScriptedModel, clock: FixedClock) -> str:
    chat_id = task().chat_id
    deps.conversations.create_chat(USER, chat_id, clock.now())
    model.output = extraction(fact("Alice's email is alice@acme.com", type="Contact"))
    ExtractionService(deps).run(task(turn="t1"))
    clock.advance(60)
    model.output = extraction(
        fact("Alice's email is alice@globex.com", type="Contact", confidence=0.6)
    )
    ExtractionService(deps).run(task(turn="t2"))
    return chat_id


def test_a_held_conflict_is_asked_in_its_chat(
    deps: Deps, model: ScriptedModel, clock: FixedClock
) -> None:
    chat_id = _conflict(deps, model, clock)
    chat = deps.conversations.get_chat(USER, chat_id)
    assert chat is not None and chat.control.status == "pending"
    interrupt = chat.control.interrupt
    assert interrupt is not None and interrupt.kind == "fact_conflict"
    assert [o.id for o in interrupt.options] == ["keep_old", "take_new", "keep_both"]
    [asked] = deps.conversations.recent_messages(USER, chat_id, 5)
    assert "alice@acme.com" in asked.text and "alice@globex.com" in asked.text
    assert (asked.kind, asked.question_id) == ("question", interrupt.id)


def test_the_answer_settles_the_item_once(
    deps: Deps, model: ScriptedModel, clock: FixedClock
) -> None:
    chat_id = _conflict(deps, model, clock)
    chat = deps.conversations.get_chat(USER, chat_id)
    assert chat is not None and chat.control.interrupt is not None
    answer = ResumeRequest(
        chat_id=chat_id, interrupt_id=chat.control.interrupt.id, answer="the new one"
    )
    service = ResumeService(deps)
    response = service.turns.run_prepared(service.prepare(USER, answer))
    assert response.reply.text == "Thanks, noted."
    texts = {f.text for f in deps.facts.list_facts(USER, FactFilter())}
    assert "Alice's email is alice@globex.com" in texts
    assert "Alice's email is alice@acme.com" not in texts  # superseded, kept in history
    assert [i for i in deps.pending.list_pending(USER) if i.resolved_at is None] == []
    chat = deps.conversations.get_chat(USER, chat_id)
    assert chat is not None and chat.control.status == "idle"
    with pytest.raises(InterruptNotPending):
        service.prepare(USER, answer)


def test_a_chat_waiting_on_another_question_is_not_asked(
    deps: Deps, model: ScriptedModel, clock: FixedClock
) -> None:
    chat_id = _conflict(deps, model, clock)
    clock.advance(60)
    model.output = extraction(
        fact("Alice's phone is 555-1234", type="Contact"),
    )
    ExtractionService(deps).run(task(turn="t3"))
    clock.advance(60)
    model.output = extraction(fact("Alice's phone is 555-9999", type="Contact", confidence=0.6))
    ExtractionService(deps).run(task(turn="t4"))
    chat = deps.conversations.get_chat(USER, chat_id)
    assert chat is not None and chat.control.interrupt is not None
    assert "alice@" in chat.control.interrupt.question  # still the first question
    assert len([i for i in deps.pending.list_pending(USER) if i.resolved_at is None]) == 2
