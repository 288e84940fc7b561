"""A question about someone is answered only from what is stored about them: in every
deployment, with nothing fitting the question, the reply says so (and what is known) with no
model call; the reply speaks to the user as "you"."""

from __future__ import annotations

import pytest

from shared.app.extraction import ExtractionService
from shared.app.turn import TurnService
from shared.deps import Deps
from shared.fakes.scripted_llm import ScriptedLLM
from shared.models.domain import ExtractionTask
from shared.understanding import UnderstandingTier
from tests.unit.turn_kit import request
from tests.unit.understanding.conftest import with_tier


@pytest.fixture
def wired(deps: Deps, tier: UnderstandingTier) -> Deps:
    return with_tier(deps, tier)  # production settings: the model phrases the replies


def _told(deps: Deps, llm: ScriptedLLM, said: str, cmid: str) -> None:
    llm.add("Got it.")
    TurnService(deps).run("alice", request(said, cmid))
    queue = deps.settings.extraction_queue
    for queued in deps.tasks.tasks:  # type: ignore[attr-defined]
        if queued.queue == queue:
            ExtractionService(deps).run(ExtractionTask.model_validate_json(queued.body))
    deps.tasks.tasks.clear()  # type: ignore[attr-defined]


def test_an_unknown_slot_says_what_is_known_of_that_person_only(
    wired: Deps, llm: ScriptedLLM
) -> None:
    _told(wired, llm, "I am allergic to peanuts.", "m1")
    _told(wired, llm, "My brother Luca lives in Bern.", "m2")
    calls = len(llm.calls)
    asked = TurnService(wired).run("alice", request("Where does Luca work?", "m3"))
    assert asked.reply.text == "I don't know that yet. What I know about Luca: Luca lives in Bern."
    assert len(llm.calls) == calls  # neither a classification nor a reply
    nobody = TurnService(wired).run("alice", request("Where does Ida live?", "m4"))
    assert nobody.reply.text == "I don't know anything about Ida yet."
    assert "peanuts" not in asked.reply.text + nobody.reply.text


def test_the_model_is_handed_only_the_facts_of_the_person_asked_about(
    wired: Deps, llm: ScriptedLLM
) -> None:
    _told(wired, llm, "I am allergic to peanuts.", "m1")
    _told(wired, llm, "My brother Luca lives in Bern.", "m2")
    llm.add("Luca lives in Bern.")
    TurnService(wired).run("alice", request("Where does Luca live?", "m3"))
    system = llm.calls[-1].request.system
    assert "Luca lives in Bern" in system and "peanuts" not in system
    assert "Speak to the user as 'you'" in system


def test_a_question_by_relation_is_answered_or_known_to_be_unknown(
    wired: Deps, llm: ScriptedLLM
) -> None:
    """On make dev, "where does my grandmother live?" was left to the weak model, which
    answered with the sister's hobby."""
    _told(wired, llm, "My grandmother Rosa lives in Salerno.", "m1")
    _told(wired, llm, "My sister Anna lives in Berlin.", "m2")
    llm.add("Your grandmother Rosa lives in Salerno.")
    TurnService(wired).run("alice", request("where does my grandmother live?", "m3"))
    system = llm.calls[-1].request.system
    assert "The stored facts answer the question: Rosa lives in Salerno." in system
    calls = len(llm.calls)
    nobody = TurnService(wired).run("alice", request("where does my brother live?", "m4"))
    assert nobody.reply.text == "I don't know anything about your brother yet."
    assert len(llm.calls) == calls  # said without the model


def test_a_family_nobody_told_of_is_not_known(wired: Deps, llm: ScriptedLLM) -> None:
    """On make dev the weak model answered "I'm a little girl."."""
    _told(wired, llm, "I am allergic to peanuts.", "m1")
    calls = len(llm.calls)
    asked = TurnService(wired).run("alice", request("what do you know about my family?", "m2"))
    assert asked.reply.text == "I don't know anything about your family yet."
    assert len(llm.calls) == calls


def test_someone_known_asked_about_in_lower_case_is_answered_from_their_facts(
    wired: Deps, llm: ScriptedLLM
) -> None:
    """On make dev, "what does luca do?" was taken for a question about the world and the
    weak model answered "Luca is a chef. He makes pasta." of a Luca who works at Siemens."""
    _told(wired, llm, "My brother Luca works at Siemens.", "m1")
    llm.add("Luca works at Siemens.")
    TurnService(wired).run("alice", request("what does luca do?", "m2"))
    system = llm.calls[-1].request.system
    assert "Luca works at Siemens" in system  # the reply is given his facts, no research
    calls = len(llm.calls)
    unknown = TurnService(wired).run("alice", request("what does ida do?", "m3"))
    assert "Siemens" not in unknown.reply.text and len(llm.calls) > calls  # not Luca's
