"""A "by the way, which Anna?" answered before or after the turn's extraction ran.

The turn enqueues its extraction, answers, and asks by the way; the user may answer at
once (a tapped option) while the extraction still waits in its queue. The answer travels as
its own task (``ExtractionTask.settles``) under the extraction's key: whichever of the two
runs first writes, and the facts end on the chosen person in every order, stored once,
with no question left open. Runs on the in-memory stores and on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from shared.app.extraction import ExtractionService
from shared.deps import Deps
from shared.models.domain import ExtractionTask, ResolvedEntity
from shared.models.memory import FactFilter
from tests.contract.conftest import FactBackend
from tests.unit.extraction_kit import (
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

SISTER = person("anna", "Anna", "sibling")
COLLEAGUE = person("anna_work", "Anna", "colleague")


@pytest.fixture
def model() -> ScriptedModel:
    model = ScriptedModel()
    model.output = extraction(fact("Anna is off sick", about="Anna"), entities=(entity("Anna"),))
    return model


@pytest.fixture
def deps(fact_backend: FactBackend, model: ScriptedModel) -> Deps:
    deps = extraction_deps(fact_backend.facts, fact_backend.contacts, fact_backend.pending, model)
    deps.contacts.add_person(SISTER)
    deps.contacts.add_person(COLLEAGUE)
    return deps


def answered(original: ExtractionTask, chosen: ResolvedEntity) -> ExtractionTask:
    return original.model_copy(update={"resolved_entities": [chosen], "settles": "Anna"})


def someone_else() -> ResolvedEntity:
    return ResolvedEntity(mention="Anna", new_person=True, confidence=1.0)


def the_colleague() -> ResolvedEntity:
    return ResolvedEntity(mention="Anna", person_id=pid("anna_work"), confidence=1.0)


def where_stored(deps: Deps) -> dict[str, str]:
    """Each stored fact's subject, as "<name>:<role>"."""
    placed = {}
    for stored in deps.facts.list_facts(USER, FactFilter()):
        subject = deps.contacts.get_person(USER, stored.subject_entity_id or "")
        assert subject is not None, "a fact about the user was not expected"
        placed[stored.text] = f"{subject.display_name}:{subject.role_to_user}"
    return placed


def open_items(deps: Deps) -> list[str]:
    return [i.mention or "" for i in deps.pending.list_pending(USER) if i.resolved_at is None]


@pytest.mark.parametrize(
    ("chosen", "expected"),
    [(someone_else, "Anna:other"), (the_colleague, "Anna:colleague")],
    ids=["someone_else", "the_colleague"],
)
def test_an_answer_before_the_extraction_extracts_with_it(
    deps: Deps, chosen: Callable[[], ResolvedEntity], expected: str
) -> None:
    original = task("My colleague Anna is off sick today.")
    service = ExtractionService(deps)
    first = service.run(answered(original, chosen()), "answer-t1")
    late = service.run(original, "extract-t1")  # the turn's own task, delivered after
    assert (first.status, first.stored, late.status) == ("stored", 1, "duplicate")
    assert where_stored(deps) == {"Anna is off sick": expected}
    assert open_items(deps) == []


def test_an_answer_after_the_extraction_settles_what_it_held(deps: Deps) -> None:
    original = task("My colleague Anna is off sick today.")
    service = ExtractionService(deps)
    held = service.run(original, "extract-t1")
    assert (held.status, held.pending, open_items(deps)) == ("stored", 1, ["Anna"])
    settled = service.run(answered(original, the_colleague()), "answer-t1")
    assert (settled.status, settled.settled) == ("settled", 1)
    assert where_stored(deps) == {"Anna is off sick": "Anna:colleague"}
    assert open_items(deps) == []
    again = service.run(answered(original, the_colleague()), "answer-t1")  # redelivered
    assert (again.status, again.settled) == ("settled", 0)
    assert len(deps.facts.list_facts(USER, FactFilter())) == 1


def test_an_answer_leaves_other_names_and_chats_alone(deps: Deps) -> None:
    service = ExtractionService(deps)
    other_chat = task("Anna is off sick.", turn="t0").model_copy(update={"chat_id": "c0"})
    service.run(other_chat, "extract-t0")
    original = task("My colleague Anna is off sick today.")
    service.run(original, "extract-t1")
    service.run(answered(original, the_colleague()), "answer-t1")
    assert open_items(deps) == ["Anna"]  # the other chat's question stays for its answer
