"""A newer statement on a single-valued slot supersedes the older fact, history kept, with no
model asked to judge the conflict; the correction's words are not stored. Runs on the
in-memory stores and on PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest

from shared.app.extraction import ExtractionService
from shared.deps import Deps
from shared.fakes.clock import FixedClock
from shared.models.memory import FactFilter
from tests.contract.conftest import FactBackend
from tests.unit.extraction_kit import (
    NOW,
    USER,
    ScriptedModel,
    entity,
    extraction,
    extraction_deps,
    fact,
    person,
    pid,
    task,
)

LUCA = person("luca", "Luca", "sibling")
REX = person("rex", "Rex", "pet")


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture
def deps(fact_backend: FactBackend, model: ScriptedModel) -> Deps:
    deps = extraction_deps(fact_backend.facts, fact_backend.contacts, fact_backend.pending, model)
    deps.contacts.add_person(LUCA)
    deps.contacts.add_person(REX)
    return deps


def told(deps: Deps, model: ScriptedModel, turn: int, name: str, text: str, kind: str) -> None:
    """One message about ``name``, read by the (scripted) model as ``text`` of type ``kind``,
    a day after the one before."""
    model.output = extraction(fact(text, about=name, type=kind), entities=(entity(name),))
    deps.clock = FixedClock(NOW + timedelta(days=turn))
    key = name.casefold()
    said = task(text, entities=((name, key, 1.0),), turn=f"t{turn}")
    ExtractionService(deps).run(said.model_copy(update={"enqueued_at": deps.clock.now()}))


def current(deps: Deps, key: str) -> list[str]:
    facts = deps.facts.list_facts(USER, FactFilter())
    return sorted(f.text for f in facts if f.subject_entity_id == pid(key))


@pytest.mark.parametrize(
    ("first", "then", "now_true"),
    [
        ("Luca works at Siemens as an engineer", "Actually Luca works at Bosch now.",
         ["Luca works at Bosch."]),
        ("Luca works at UBS", "Luca no longer works at UBS", ["Luca no longer works at UBS"]),
        ("Luca lives in Bern", "Luca moved to Basel", ["Luca moved to Basel"]),
        ("Luca is married to Eva", "Luca is dating Mia now", ["Luca is dating Mia"]),
    ],
)  # fmt: skip
def test_a_newer_value_supersedes_and_keeps_the_history(
    deps: Deps, model: ScriptedModel, first: str, then: str, now_true: list[str]
) -> None:
    told(deps, model, 1, "Luca", first, "Work")
    told(deps, model, 2, "Luca", then, "Other")  # another reader's type: the slot decides
    assert current(deps, "luca") == now_true
    [latest] = [f for f in deps.facts.list_facts(USER, FactFilter()) if f.text == now_true[0]]
    versions = deps.facts.versions(USER, latest.id)
    assert [v.text for v in versions] == [now_true[0], first]
    assert versions[1].ended_by == "superseded"


def test_a_pets_new_owner_supersedes_and_other_slots_stay(deps: Deps, model: ScriptedModel) -> None:
    told(deps, model, 1, "Rex", "Rex belongs to Anna", "Relationship")
    told(deps, model, 2, "Rex", "Rex loves the park", "Hobby")
    told(deps, model, 3, "Rex", "Rex belongs to Marc", "Relationship")
    assert current(deps, "rex") == ["Rex belongs to Marc", "Rex loves the park"]


def test_an_ended_slot_leaves_another_value_alone(deps: Deps, model: ScriptedModel) -> None:
    told(deps, model, 1, "Luca", "Luca works at Bosch", "Work")
    told(deps, model, 2, "Luca", "Luca no longer works at UBS", "Work")
    assert current(deps, "luca") == ["Luca no longer works at UBS", "Luca works at Bosch"]
