"""Two messages' extraction tasks may run in either order (a retry, a queue backlog): what
was said later wins, whichever task ran first. A fact is dated from its message. On the
in-memory stores and on PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta

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


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture
def deps(fact_backend: FactBackend, model: ScriptedModel) -> Deps:
    deps = extraction_deps(fact_backend.facts, fact_backend.contacts, fact_backend.pending, model)
    deps.contacts.add_person(LUCA)
    return deps


def extracted(deps: Deps, model: ScriptedModel, text: str, said: datetime, ran: datetime) -> None:
    """The task of a message said at ``said``, run at ``ran``."""
    model.output = extraction(fact(text, about="Luca", type="Other"), entities=(entity("Luca"),))
    deps.clock = FixedClock(ran)
    turn = f"t{int(said.timestamp())}"
    queued = task(text, entities=(("Luca", "luca", 1.0),), turn=turn)
    ExtractionService(deps).run(queued.model_copy(update={"enqueued_at": said}))


def current(deps: Deps) -> list[str]:
    facts = deps.facts.list_facts(USER, FactFilter())
    return sorted(f.text for f in facts if f.subject_entity_id == pid("luca"))


def test_the_newer_message_wins_when_the_older_ones_task_runs_last(
    deps: Deps, model: ScriptedModel
) -> None:
    first, then = NOW + timedelta(minutes=1), NOW + timedelta(minutes=2)
    extracted(deps, model, "Luca moved to Basel", said=then, ran=then + timedelta(seconds=5))
    extracted(deps, model, "Luca lives in Bern", said=first, ran=then + timedelta(seconds=9))
    assert current(deps) == ["Luca moved to Basel"]
    [basel] = deps.facts.list_facts(USER, FactFilter())
    assert basel.valid_from == then  # dated from its message, not from its task


def test_in_order_the_correction_supersedes_though_said_before_the_first_task_ran(
    deps: Deps, model: ScriptedModel
) -> None:
    """Typed quickly: the correction was said while the first task still waited."""
    first, then = NOW + timedelta(minutes=1), NOW + timedelta(minutes=1, seconds=3)
    extracted(deps, model, "Luca lives in Bern", said=first, ran=first + timedelta(seconds=8))
    extracted(deps, model, "Luca moved to Basel", said=then, ran=first + timedelta(seconds=12))
    assert current(deps) == ["Luca moved to Basel"]
