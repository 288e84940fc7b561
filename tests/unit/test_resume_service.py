"""Answering a pending question through the resume function's service, on fakes."""

from __future__ import annotations

import pytest

from shared.adapters.scripted_llm import ScriptedLLM
from shared.deps import Deps
from shared.errors import BadRequest, InterruptNotPending, NotFound
from shared.models.domain import ExtractionTask
from shared.models.wire import ResumeRequest, TurnResponse
from shared.services.resume import ResumeService
from shared.services.turn import Chunk, Done, TurnService
from tests.unit.turn_kit import add_person, classification, nodes, request


def _ask_which_thomas(deps: Deps, llm: ScriptedLLM) -> tuple[TurnResponse, str]:
    add_person(deps, "Thomas", "colleague")
    brother = add_person(deps, "Thomas", "sibling").id
    llm.add(classification(facts=True, semantic=True, entities=[{"name": "Thomas"}]))
    asked = TurnService(deps).run("alice", request("Thomas moved to Bern; what does he like?"))
    assert asked.interrupt is not None
    return asked, brother


def _answer(asked: TurnResponse, answer: str) -> ResumeRequest:
    assert asked.interrupt is not None
    return ResumeRequest(chat_id=asked.chat_id, interrupt_id=asked.interrupt.id, answer=answer)


def test_an_option_id_continues_the_asked_turn_once(deps: Deps, llm: ScriptedLLM) -> None:
    asked, brother = _ask_which_thomas(deps, llm)
    llm.add("Your brother likes jazz.")
    service = ResumeService(deps)
    response = service.turns.run_prepared(service.prepare("alice", _answer(asked, brother)))
    assert response.reply.text == "Your brother likes jazz."
    assert response.chat_id == asked.chat_id and response.interrupt is None
    assert "resolve_disambiguation" in nodes(deps, f"resume.{asked.interrupt.id}")  # type: ignore[union-attr]
    [task] = [ExtractionTask.model_validate_json(t.body) for t in deps.tasks.tasks]  # type: ignore[attr-defined]
    assert [e.person_id for e in task.resolved_entities] == [brother]
    stored = [m.text for m in deps.conversations.recent_messages("alice", asked.chat_id, 10)]
    assert "Thomas (sibling)" in stored  # the user's choice, as its label
    with pytest.raises(InterruptNotPending):
        service.prepare("alice", _answer(asked, brother))  # a second answer


def test_words_that_pick_one_option_are_an_answer(deps: Deps, llm: ScriptedLLM) -> None:
    asked, _ = _ask_which_thomas(deps, llm)
    llm.add("He likes chess.")
    service = ResumeService(deps)
    events = list(service.turns.events(service.prepare("alice", _answer(asked, "the colleague"))))
    assert isinstance(events[0], Chunk) and isinstance(events[-1], Done)


def test_an_answer_that_picks_nothing_is_refused_and_keeps_the_question(
    deps: Deps, llm: ScriptedLLM
) -> None:
    asked, _ = _ask_which_thomas(deps, llm)
    with pytest.raises(BadRequest):
        ResumeService(deps).prepare("alice", _answer(asked, "the weather is nice"))
    chat = deps.conversations.get_chat("alice", asked.chat_id)
    assert chat is not None and chat.pending is not None


def test_unknown_interrupt_and_other_users_chat(deps: Deps, llm: ScriptedLLM) -> None:
    asked, brother = _ask_which_thomas(deps, llm)
    wrong = ResumeRequest(chat_id=asked.chat_id, interrupt_id="nope", answer=brother)
    with pytest.raises(InterruptNotPending):
        ResumeService(deps).prepare("alice", wrong)
    with pytest.raises(NotFound):
        ResumeService(deps).prepare("mallory", _answer(asked, brother))


def test_an_approval_through_resume_runs_the_step(deps: Deps, llm: ScriptedLLM) -> None:
    plan = {"steps": [{"id": "s1", "agent": "productivity", "goal": "book Friday 3pm gym"}]}
    llm.add(classification("complex"), plan)
    asked = TurnService(deps).run("alice", request("Book me the gym on Friday"))
    service = ResumeService(deps)
    service.turns.run_prepared(service.prepare("alice", _answer(asked, "approve")))
    assert len(deps.publisher.messages) == 1  # type: ignore[attr-defined]


def test_an_answer_over_the_cap_is_refused_before_anything(deps: Deps, llm: ScriptedLLM) -> None:
    from shared.errors import MessageTooLong

    asked, _ = _ask_which_thomas(deps, llm)
    with pytest.raises(MessageTooLong):
        ResumeService(deps).prepare("alice", _answer(asked, "x" * 8001))
