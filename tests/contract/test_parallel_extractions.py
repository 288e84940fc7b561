"""Two messages about someone new, extracted at the same moment (Cloud Tasks keeps no order
and runs tasks side by side), make one person, not two: the second extraction waits for the
first and finds the person it created. On the in-memory stores and on PostgreSQL."""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor

from pydantic import BaseModel

from shared.app.extraction import ExtractionService
from shared.models.extraction import Extraction
from shared.models.memory import FactFilter
from shared.ports import LLMRequest
from tests.contract.conftest import FactBackend
from tests.unit.extraction_kit import USER, ScriptedModel, entity, extraction, extraction_deps, fact
from tests.unit.extraction_kit import task as said

MEETING = 2.0  # seconds both reads may wait for each other: without the rule, they meet


class MeetingModel(ScriptedModel):
    """Both extractions' model calls wait for each other, briefly: were they not one at a
    time, both would resolve "Rosa" before either wrote her."""

    def __init__(self) -> None:
        super().__init__()
        self.meeting = threading.Barrier(2, timeout=MEETING)

    def __call__(self, request: LLMRequest, schema: type[BaseModel] | None) -> BaseModel:
        if schema is Extraction:
            with contextlib.suppress(threading.BrokenBarrierError):  # held back: the rule
                self.meeting.wait()
        return super().__call__(request, schema)


def test_two_messages_about_someone_new_at_once_make_one_person(
    fact_backend: FactBackend,
) -> None:
    model = MeetingModel()
    deps = extraction_deps(fact_backend.facts, fact_backend.contacts, fact_backend.pending, model)
    model.output = extraction(
        fact("Rosa lives in Napoli.", about="Rosa", type="Other"),
        entities=(entity("Rosa", "grandparent"),),
    )
    tasks = [said("my grandmother rosa lives in napoli", turn=t) for t in ("t1", "t2")]
    with ThreadPoolExecutor(2) as pool:
        outcomes = list(pool.map(ExtractionService(deps).run, tasks))
    assert sorted(o.new_persons for o in outcomes) == [0, 1]
    persons = [p for p in deps.contacts.list_persons(USER) if p.display_name == "Rosa"]
    assert len(persons) == 1
    facts = deps.facts.list_facts(USER, FactFilter())
    assert {f.subject_entity_id for f in facts} == {persons[0].id}
