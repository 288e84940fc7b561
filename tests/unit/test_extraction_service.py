"""Extraction on fakes: attribution, the preference flag, exactly-once storage."""

from __future__ import annotations

from datetime import UTC, datetime

from shared.adapters.scripted_llm import ScriptedLLM
from shared.deps import Deps
from shared.models.domain import ExtractionTask, Person, ResolvedEntity
from shared.services.extraction import Extraction, ExtractionService

ANNA = "6f1c1b9e-8d1e-4a8e-9f57-0d3c7c1b2a11"


def task(
    text: str, entities: list[ResolvedEntity] | None = None, prefs: bool = False
) -> ExtractionTask:
    return ExtractionTask(
        user_id="alice",
        chat_id="c1",
        turn_id="t1",
        message_id="t1-u",
        text=text,
        resolved_entities=entities or [],
        has_preferences=prefs,
        enqueued_at=datetime(2026, 11, 21, tzinfo=UTC),
    )


def extraction(*facts: tuple[str, str, str]) -> Extraction:
    return Extraction.model_validate(
        {
            "facts": [
                {"text": t, "type": ty, "about": a, "confidence": 0.95} for t, ty, a in facts
            ],
            "topics": [],
        }
    )


def test_facts_are_attributed_to_the_user_or_a_resolved_person(
    deps: Deps, llm: ScriptedLLM
) -> None:
    deps.contacts.add_person(
        Person(id=ANNA, user_id="alice", display_name="Anna", role_to_user="sibling")
    )
    llm.add(
        extraction(("Alice works at ACME", "Work", "user"), ("Anna lives in Bern", "Other", "Anna"))
    )
    anna = ResolvedEntity(mention="Anna", person_id=ANNA, confidence=0.97)
    outcome = ExtractionService(deps).run(task("I work at ACME; Anna lives in Bern", [anna]))
    assert (outcome.stored, outcome.skipped) == (2, 0)
    facts = {f.text: f for f in deps.facts.list_facts("alice")}
    assert facts["Alice works at ACME"].subject_entity_id is None
    assert facts["Anna lives in Bern"].subject_entity_id == ANNA
    assert facts["Anna lives in Bern"].source_turn_id == "t1"


def test_a_fact_about_an_unresolved_or_uncertain_person_is_never_guessed(
    deps: Deps, llm: ScriptedLLM
) -> None:
    llm.add(
        extraction(
            ("Thomas is in Mallorca", "Travel", "Thomas"), ("Max likes jazz", "Hobby", "Max")
        )
    )
    unsure = ResolvedEntity(mention="Thomas", person_id=ANNA, confidence=0.6)
    outcome = ExtractionService(deps).run(task("Thomas is in Mallorca, Max likes jazz", [unsure]))
    assert (outcome.stored, outcome.skipped) == (0, 2)
    assert deps.facts.list_facts("alice") == []


def test_preferences_only_when_the_turn_flagged_them(deps: Deps, llm: ScriptedLLM) -> None:
    llm.add(extraction(("Alice likes green tea", "Preference", "user")))
    assert ExtractionService(deps).run(task("I like green tea")).stored == 0
    llm.add(extraction(("Alice likes green tea", "Preference", "user")))
    second = task("I like green tea", prefs=True).model_copy(update={"turn_id": "t2"})
    assert ExtractionService(deps).run(second).stored == 1


def test_a_redelivered_task_writes_nothing_twice(deps: Deps, llm: ScriptedLLM) -> None:
    llm.add(extraction(("Alice is vegetarian", "Preference", "user")))
    llm.add(extraction(("Alice is vegetarian", "Preference", "user")))
    service = ExtractionService(deps)
    first = service.run(task("I'm vegetarian", prefs=True))
    again = service.run(task("I'm vegetarian", prefs=True))
    assert (first.duplicate, again.duplicate) == (False, True)
    assert len(deps.facts.list_facts("alice")) == 1
