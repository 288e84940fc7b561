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
ROSA = person("rosa", "Rosa", "grandparent")
BERND = person("bernd", "Bernd", "other")


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture
def deps(fact_backend: FactBackend, model: ScriptedModel) -> Deps:
    deps = extraction_deps(fact_backend.facts, fact_backend.contacts, fact_backend.pending, model)
    deps.contacts.add_person(LUCA)
    deps.contacts.add_person(REX)
    deps.contacts.add_person(ROSA)
    deps.contacts.add_person(BERND)
    return deps


def told(
    deps: Deps,
    model: ScriptedModel,
    turn: float,
    name: str,
    text: str,
    kind: str,
    *more: str,
    ran: float | None = None,
) -> None:
    """One message about ``name``, read by the (scripted) model as ``text`` (and ``more``
    facts, a sentence cut at its clauses) of type ``kind``, said ``turn`` days after NOW;
    its extraction task runs then, or ``ran`` days after NOW (a queue's delay)."""
    said = [fact(one, about=name, type=kind) for one in (text, *more)]
    model.output = extraction(*said, entities=(entity(name),))
    deps.clock = FixedClock(NOW + timedelta(days=turn if ran is None else ran))
    key = name.casefold()
    queued = task(text, entities=((name, key, 1.0),), turn=f"t{turn}".replace(".", "_"))
    update = {"enqueued_at": NOW + timedelta(days=turn)}
    ExtractionService(deps).run(queued.model_copy(update=update))


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


def test_a_job_said_with_is_a_supersedes_the_old_job(deps: Deps, model: ScriptedModel) -> None:
    told(deps, model, 1, "Bernd", "Bernd is a baker in Hamburg.", "Other")
    told(deps, model, 2, "Bernd", "Bernd is a butcher.", "Other")
    assert current(deps, "bernd") == ["Bernd is a butcher."]
    [latest] = [
        f for f in deps.facts.list_facts(USER, FactFilter()) if f.text == "Bernd is a butcher."
    ]
    assert [v.text for v in deps.facts.versions(USER, latest.id)] == [
        "Bernd is a butcher.",
        "Bernd is a baker in Hamburg.",
    ]


def test_a_correction_closes_only_the_slot_it_names(deps: Deps, model: ScriptedModel) -> None:
    """ "my grandmother rosa lives in napoli and she is 88" is stored as two facts (the tier
    cuts it at "and"): "she lives in salerno now" closes the home, and the age stays."""
    told(
        deps,
        model,
        1,
        "Rosa",
        "The user's grandmother Rosa lives in Napoli.",
        "Other",
        "Rosa is 88.",
    )
    assert current(deps, "rosa") == ["Rosa is 88.", "The user's grandmother Rosa lives in Napoli."]
    told(deps, model, 2, "Rosa", "Rosa lives in Salerno.", "Other")
    assert current(deps, "rosa") == ["Rosa is 88.", "Rosa lives in Salerno."]
    history = deps.facts.list_facts(USER, FactFilter(include_history=True))
    [napoli] = [f for f in history if "Napoli" in f.text]
    assert napoli.valid_to is not None and napoli.ended_by == "superseded"


def test_the_newer_message_wins_when_the_older_ones_task_runs_last(
    deps: Deps, model: ScriptedModel
) -> None:
    """Tasks run in either order (a retry, a backlog): a fact is dated from its message."""
    told(deps, model, 2, "Luca", "Luca moved to Basel", "Other")
    told(deps, model, 1, "Luca", "Luca lives in Bern", "Other", ran=3)
    assert current(deps, "luca") == ["Luca moved to Basel"]
    [basel] = [f for f in deps.facts.list_facts(USER, FactFilter()) if "Basel" in f.text]
    assert basel.valid_from == NOW + timedelta(days=2)  # its message's time, not its task's


def test_a_quick_correction_said_before_the_first_task_ran_supersedes(
    deps: Deps, model: ScriptedModel
) -> None:
    told(deps, model, 1, "Luca", "Luca lives in Bern", "Other", ran=1.5)
    told(deps, model, 1.2, "Luca", "Luca moved to Basel", "Other", ran=1.6)
    assert current(deps, "luca") == ["Luca moved to Basel"]
