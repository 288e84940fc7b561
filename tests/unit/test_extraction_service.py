"""ExtractionService on the in-memory fakes: one model call, one write, nothing twice."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from shared.app.extraction import ExtractionService
from shared.deps import Deps
from shared.errors import DataRejected, ModelOutputInvalid
from shared.fakes.clock import FixedClock
from shared.fakes.facts import FakeFactStore
from shared.fakes.scripted_llm import ScriptedLLM
from shared.models.domain import ExtractionTask
from shared.models.extraction import Extraction
from shared.models.memory import ExtractionChanges, FactFilter
from shared.services.context_cache import context_key
from shared.services.memory.prompt import MAX_PROMPT_FACTS
from tests.unit.extraction_kit import (
    USER,
    ScriptedModel,
    entity,
    extraction,
    fact,
    person,
    pid,
    task,
)


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture
def llm(model: ScriptedModel) -> ScriptedLLM:
    return ScriptedLLM(handler=model)


def stored(deps: Deps, user: str = USER) -> dict[str, str | None]:
    return {f.text: f.subject_entity_id for f in deps.facts.list_facts(user, FactFilter())}


def run(deps: Deps, model: ScriptedModel, output: Extraction, **task_args: object) -> object:
    model.output = output
    return ExtractionService(deps).run(task(**task_args))  # type: ignore[arg-type]


def test_facts_go_to_the_user_and_to_the_person_the_turn_resolved(
    deps: Deps, model: ScriptedModel, llm: ScriptedLLM
) -> None:
    deps.contacts.add_person(person("anna", "Anna", "sibling"))
    model.output = extraction(
        fact("Alice works at ACME", type="Work"),
        fact("Anna lives in Bern", about="Anna"),
    )
    outcome = ExtractionService(deps).run(
        task("I work at ACME; Anna lives in Bern", entities=(("Anna", "anna", 0.97),))
    )
    assert (outcome.status, outcome.stored, outcome.skipped) == ("stored", 2, 0)
    assert stored(deps) == {"Alice works at ACME": None, "Anna lives in Bern": pid("anna")}
    anna_fact = deps.facts.list_facts(USER, FactFilter(subject_id=pid("anna")))[0]
    assert anna_fact.relation_to_user == "sibling"
    assert anna_fact.source.turn_id == "t1" and anna_fact.source.message_id == "t1-u"
    assert anna_fact.embedding_model == deps.embedder.model_name
    assert len(llm.calls) == 1  # one structured call: no red flag was needed


def test_a_redelivered_task_writes_nothing_twice(deps: Deps, model: ScriptedModel) -> None:
    model.output = extraction(fact("Alice is vegetarian", type="Preference"))
    service = ExtractionService(deps)
    first = service.run(task("I'm vegetarian", prefs=True), "extract-t1")
    again = service.run(task("I'm vegetarian", prefs=True), "extract-t1")
    assert (first.duplicate, again.duplicate) == (False, True)
    assert again.as_body()["status"] == "duplicate"
    assert len(deps.facts.list_facts(USER, FactFilter())) == 1


def test_only_an_extraction_that_wrote_something_drops_the_cached_turn_context(
    deps: Deps, model: ScriptedModel
) -> None:
    mine, bobs = context_key(USER), context_key("bob")
    deps.cache.set(mine, b"context", 3600)
    deps.cache.set(bobs, b"context", 3600)
    model.output = extraction(fact("Alice plays chess", type="Hobby"))
    ExtractionService(deps).run(task(), "extract-t1")
    assert (deps.cache.get(mine), deps.cache.get(bobs)) == (None, b"context")

    deps.cache.set(mine, b"context", 3600)
    assert ExtractionService(deps).run(task(), "extract-t1").duplicate  # redelivered
    model.output = extraction()  # a message without facts: nothing to write
    assert ExtractionService(deps).run(task(turn="t2")).stored == 0
    assert deps.cache.get(mine) == b"context"


def test_the_task_key_defaults_to_the_name_derived_from_the_turn(
    deps: Deps, model: ScriptedModel
) -> None:
    model.output = extraction(fact("Alice plays chess", type="Hobby"))
    assert ExtractionService(deps).run(task()).task_key == "extract-t1"
    assert ExtractionService(deps).run(task(), "extract-t1").duplicate


def test_preferences_only_when_the_turn_flagged_them(
    deps: Deps, model: ScriptedModel, llm: ScriptedLLM
) -> None:
    model.output = extraction(fact("Alice likes green tea", type="Preference"))
    unflagged = ExtractionService(deps).run(task("I like green tea"))
    assert (unflagged.stored, unflagged.skipped) == (0, 1)
    assert "Do not extract preferences" in llm.requests[-1].system
    flagged = ExtractionService(deps).run(task("I like green tea", prefs=True, turn="t2"))
    assert flagged.stored == 1
    assert "Also extract the user's stated preferences" in llm.requests[-1].system


def test_a_fact_the_reader_is_not_sure_the_message_states_is_skipped(
    deps: Deps, model: ScriptedModel
) -> None:
    model.output = extraction(
        fact("Alice asked for a bakery", confidence=0.0),
        fact("Alice might move to Basel", confidence=0.49),
        fact("Alice plays the cello", type="Hobby", confidence=0.5),
    )
    outcome = ExtractionService(deps).run(task("Any tips for a bakery? I play the cello."))
    assert (outcome.stored, outcome.skipped) == (1, 2)
    assert set(stored(deps)) == {"Alice plays the cello"}


def test_the_tier_as_reader_stores_what_it_was_sure_of_without_a_model_call(
    deps: Deps, model: ScriptedModel, llm: ScriptedLLM
) -> None:
    tier_only = Deps(deps.settings.model_copy(update={"extraction_reader": "understanding"}),
                     clock=deps.clock, llm=llm, embedder=deps.embedder, facts=deps.facts,
                     contacts=deps.contacts, pending=deps.pending)  # fmt: skip
    model.output = extraction(fact("Alice asked for a bakery", confidence=0.9))
    sure = extraction(fact("Alice plays the cello", type="Hobby", confidence=0.9))
    read = ExtractionService(tier_only).run(task("I play the cello").model_copy(
        update={"fallback": sure}))  # fmt: skip
    unread = ExtractionService(tier_only).run(task("Any tips for a bakery?", turn="t2"))
    assert (read.stored, read.read_by, unread.stored, unread.read_by) == (
        1, "understanding", 0, "understanding")  # fmt: skip
    assert set(stored(deps)) == {"Alice plays the cello"}
    assert llm.requests == []


def test_the_prompt_shows_current_facts_under_refs_and_a_replacement_supersedes(
    deps: Deps, model: ScriptedModel, llm: ScriptedLLM
) -> None:
    model.output = extraction(fact("Alice's favourite band is Muse", type="Hobby"))
    ExtractionService(deps).run(task(turn="t1"))
    model.output = extraction(
        fact("Alice's favourite band is Radiohead", type="Hobby", replaces="F1")
    )
    outcome = ExtractionService(deps).run(task(turn="t2"))
    prompt = llm.requests[-1].messages[0].text
    assert "F1 (user): Alice's favourite band is Muse" in prompt
    assert outcome.stored == 1
    assert stored(deps) == {"Alice's favourite band is Radiohead": None}
    history = deps.facts.list_facts(USER, FactFilter(include_history=True))
    assert {f.text: f.valid_to is not None for f in history} == {
        "Alice's favourite band is Muse": True,
        "Alice's favourite band is Radiohead": False,
    }


def test_the_prompt_caps_the_known_facts(
    deps: Deps, model: ScriptedModel, llm: ScriptedLLM
) -> None:
    for turn in ("t1", "t2"):
        model.output = extraction(*(fact(f"Alice has {n} {turn} cards") for n in range(10)))
        ExtractionService(deps).run(task(turn=turn))
    model.output = extraction()
    ExtractionService(deps).run(task(turn="t3"))
    assert len(deps.facts.list_facts(USER, FactFilter())) == 20
    prompt = llm.requests[-1].messages[0].text
    assert f"F{MAX_PROMPT_FACTS} (user)" in prompt and f"F{MAX_PROMPT_FACTS + 1} " not in prompt


def test_a_changed_employer_supersedes_without_the_model_saying_so(
    deps: Deps, model: ScriptedModel
) -> None:
    model.output = extraction(fact("Alice works at ACME", type="Work"))
    ExtractionService(deps).run(task(turn="t1"))
    model.output = extraction(fact("Alice works at Globex", type="Work"))
    outcome = ExtractionService(deps).run(task(turn="t2"))
    assert outcome.stored == 1 and stored(deps) == {"Alice works at Globex": None}


def test_a_sensitive_or_unsure_change_waits_for_the_user(
    deps: Deps, model: ScriptedModel, clock: FixedClock
) -> None:
    model.output = extraction(fact("Alice is allergic to penicillin", type="Allergy"))
    ExtractionService(deps).run(task(turn="t1"))
    clock.advance(60)  # said a minute later, the newest fact comes first in the prompt: F1
    later = {"enqueued_at": clock.now()}
    model.output = extraction(fact("Alice's email is alice@acme.com", type="Contact"))
    ExtractionService(deps).run(task(turn="t2").model_copy(update=later))
    model.output = extraction(
        fact("Alice is allergic to amoxicillin", type="Allergy", replaces="F2", confidence=0.9),
        fact("Alice's email is alice@globex.com", type="Contact", confidence=0.6),
    )
    outcome = ExtractionService(deps).run(task(turn="t3").model_copy(update=later))
    assert (outcome.stored, outcome.pending) == (0, 2)
    assert set(stored(deps)) == {
        "Alice is allergic to penicillin",
        "Alice's email is alice@acme.com",
    }
    items = deps.pending.list_pending(USER)
    assert {i.kind for i in items} == {"fact_conflict"}
    held = {i.facts[0].text: i.conflicting_fact_id for i in items}
    current = {f.text: f.id for f in deps.facts.list_facts(USER, FactFilter())}
    assert held == {
        "Alice is allergic to amoxicillin": current["Alice is allergic to penicillin"],
        "Alice's email is alice@globex.com": current["Alice's email is alice@acme.com"],
    }


def test_a_repeated_fact_reinforces_the_current_one(deps: Deps, model: ScriptedModel) -> None:
    model.output = extraction(fact("Alice runs every morning", type="Hobby", confidence=0.7))
    ExtractionService(deps).run(task(turn="t1"))
    model.output = extraction(fact("Alice runs every morning.", type="Hobby", confidence=0.7))
    outcome = ExtractionService(deps).run(task(turn="t2"))
    assert (outcome.stored, outcome.reinforced) == (0, 1)
    [only] = deps.facts.list_facts(USER, FactFilter())
    assert only.seen_count == 2 and only.confidence == pytest.approx(0.91)


def test_health_facts_are_stored_sure_or_not_at_all(deps: Deps, model: ScriptedModel) -> None:
    model.output = extraction(
        fact("Alice is allergic to peanuts", type="Allergy", confidence=0.85, sensitivity="low"),
        fact("Alice might have asthma", type="Medical", confidence=0.5),
    )
    outcome = ExtractionService(deps).run(task())
    assert (outcome.stored, outcome.skipped) == (1, 1)
    [allergy] = deps.facts.list_facts(USER, FactFilter())
    assert allergy.confidence == pytest.approx(0.9) and allergy.sensitivity == "high"


def test_time_markers_anchor_in_the_users_zone(deps: Deps, model: ScriptedModel) -> None:
    model.output = extraction(
        fact("Alice flies to Rome next Friday", type="Travel", temporal_marker="next Friday"),
        fact("Alice sees the dentist", type="Schedule", temporal_marker="soon", date="2026-12-02"),
    )
    ExtractionService(deps).run(task(timezone="Europe/Zurich"))
    anchors = {f.text: f.time_anchor for f in deps.facts.list_facts(USER, FactFilter())}
    assert anchors == {
        "Alice flies to Rome next Friday": datetime(2026, 11, 26, 23, 0, tzinfo=UTC),
        "Alice sees the dentist": datetime(2026, 12, 1, 23, 0, tzinfo=UTC),
    }


def test_a_clearly_new_person_is_created_with_what_the_message_says(
    deps: Deps, model: ScriptedModel
) -> None:
    model.output = extraction(
        fact("Sara is a nurse in Basel", about="Sara", type="Work"),
        entities=(entity("Sara", "colleague", occupation="nurse", city="Basel"),),
    )
    outcome = ExtractionService(deps).run(task("My colleague Sara is a nurse in Basel"))
    [sara] = deps.contacts.list_persons(USER)
    assert (outcome.new_persons, sara.display_name, sara.role_to_user) == (1, "Sara", "colleague")
    assert sara.descriptors == {"occupation": "nurse", "city": "Basel"}
    assert stored(deps) == {"Sara is a nurse in Basel": sara.id}


def test_an_ambiguous_mention_is_held_pending_with_its_candidates(
    deps: Deps, model: ScriptedModel
) -> None:
    deps.contacts.add_person(person("martin_son", "Martin", "child", age="8"))
    deps.contacts.add_person(person("martin_work", "Martin", "colleague", occupation="accountant"))
    model.output = extraction(fact("Martin loves pizza", about="Martin", type="Preference"))
    outcome = ExtractionService(deps).run(task("Martin loves pizza", prefs=True))
    assert (outcome.stored, outcome.pending) == (0, 1)
    [item] = deps.pending.list_pending(USER)
    assert (item.kind, item.mention, item.chat_id) == ("disambiguation", "Martin", "c1")
    assert sorted(item.candidate_ids) == sorted([pid("martin_son"), pid("martin_work")])
    assert item.proposed_person is not None and item.proposed_person.display_name == "Martin"
    [held] = item.facts
    assert held.subject_entity_id is None and held.relation_to_user != "self"
    assert stored(deps) == {}


def test_a_model_that_breaks_its_schema_twice_fails_loudly(deps: Deps, llm: ScriptedLLM) -> None:
    llm.add({"facts": "nope"}, {"facts": "still nope"})
    with pytest.raises(ModelOutputInvalid):
        ExtractionService(deps).run(task())
    assert stored(deps) == {}


class RefusesOnce(FakeFactStore):
    """A store whose first write is refused, as when the user closed a fact meanwhile."""

    refused = False

    def apply_extraction(
        self,
        task_key: str,
        user_id: str,
        changes: ExtractionChanges,
        now: datetime,
        issued_at: datetime | None = None,
    ) -> bool:
        if not self.refused:
            self.refused = True
            raise DataRejected("fact is not current")
        return super().apply_extraction(task_key, user_id, changes, now, issued_at)


def test_a_refused_write_is_planned_and_tried_once_more(deps: Deps, model: ScriptedModel) -> None:
    facts = RefusesOnce(deps.facts.contacts, deps.clock)  # type: ignore[attr-defined]
    deps.__dict__["facts"] = facts
    model.output = extraction(fact("Alice collects stamps", type="Hobby"))
    assert ExtractionService(deps).run(task()).stored == 1 and facts.refused


def test_a_task_queued_before_the_account_was_erased_stores_nothing(
    deps: Deps, llm: ScriptedLLM
) -> None:
    queued = task()
    deps.facts.delete_user(queued.user_id, deps.clock.now())  # erased meanwhile
    outcome = ExtractionService(deps).run(queued)
    assert outcome.status == "erased"
    assert llm.calls == []  # not even the model is asked
    assert deps.facts.list_facts(queued.user_id, FactFilter(include_history=True)) == []


def test_a_redelivered_task_skips_the_model_call(
    deps: Deps, model: ScriptedModel, llm: ScriptedLLM
) -> None:
    model.output = extraction(fact("Alice collects stamps", type="Hobby"))
    assert ExtractionService(deps).run(task()).status == "stored"
    calls = len(llm.calls)
    assert ExtractionService(deps).run(task()).status == "duplicate"
    assert len(llm.calls) == calls


def test_a_nickname_resolved_with_confidence_becomes_an_alias(
    deps: Deps, model: ScriptedModel
) -> None:
    deps.contacts.add_person(person("thomas", "Thomas", "friend"))
    model.output = extraction(
        fact("Tom plays tennis", about="Tom", type="Hobby"),
        entities=(entity("Tom", "friend", employer="ACME", city="Bern"),),
    )
    assert ExtractionService(deps).run(task(turn="t1")).stored == 1
    [thomas] = deps.contacts.find_by_name(USER, "Tom")  # the exact lookup now finds him
    assert thomas.id == pid("thomas") and thomas.aliases == ["Tom"]
    assert thomas.descriptors["employer"] == "ACME" and thomas.descriptors["city"] == "Bern"


def test_learning_never_overwrites_a_descriptor_or_repeats_an_alias(
    deps: Deps, model: ScriptedModel
) -> None:
    deps.contacts.add_person(person("thomas", "Thomas", "friend", aliases=("Tom",), city="Basel"))
    model.output = extraction(
        fact("Tom moved", about="Tom", type="Other"), entities=(entity("Tom", city="Bern"),)
    )
    ExtractionService(deps).run(task(turn="t2"))
    thomas = deps.contacts.get_person(USER, pid("thomas"))
    assert thomas is not None
    assert (thomas.aliases, thomas.descriptors) == (["Tom"], {"city": "Basel"})


def test_an_answer_task_must_name_the_person_chosen() -> None:
    with pytest.raises(ValidationError, match="settles names no chosen person"):
        ExtractionTask.model_validate({**task("Anna is off sick").model_dump(), "settles": "Anna"})
