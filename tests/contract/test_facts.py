"""FactStore and ContactStore contract: the fakes and PostgreSQL behave the same."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from shared.errors import DataRejected
from shared.models.domain import NewFact, Person
from tests.contract.conftest import FactBackend, unique


def fact(key: str, **changes: Any) -> NewFact:
    values: dict[str, Any] = {
        "text": f"fact {key}",
        "type": "Preference",
        "confidence": 0.8,
        "idempotency_key": key,
        "embedding": [0.6, 0.8, 0.0],
        "embedding_model": "test-3",
    }
    return NewFact.model_validate(values | changes)


def person(user_id: str, name: str, **changes: Any) -> Person:
    values: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "user_id": user_id,
        "display_name": name,
        "role_to_user": "friend",
    }
    return Person.model_validate(values | changes)


# -- facts ------------------------------------------------------------------------------------
def test_an_extraction_is_saved_once_per_task_key(fact_backend: FactBackend, user_id: str) -> None:
    facts, task = fact_backend.facts, unique("task")
    assert facts.save_extraction(task, user_id, [fact("a"), fact("b")]) is True
    assert facts.save_extraction(task, user_id, [fact("c")]) is False  # writes nothing
    stored = facts.list_facts(user_id)
    assert sorted(f.text for f in stored) == ["fact a", "fact b"]
    first = next(f for f in stored if f.text == "fact a")
    assert (first.user_id, first.type, first.subject_entity_id) == (user_id, "Preference", None)
    assert first.confidence == pytest.approx(0.8)


def test_an_empty_extraction_still_consumes_its_task_key(
    fact_backend: FactBackend, user_id: str
) -> None:
    task = unique("task")
    assert fact_backend.facts.save_extraction(task, user_id, []) is True
    assert fact_backend.facts.save_extraction(task, user_id, [fact("late")]) is False
    assert fact_backend.facts.list_facts(user_id) == []


def test_facts_are_scoped_to_their_user(fact_backend: FactBackend, user_id: str) -> None:
    other = unique("user")
    fact_backend.facts.save_extraction(unique("task"), user_id, [fact("mine")])
    fact_backend.facts.save_extraction(unique("task"), other, [fact("theirs")])
    assert [f.text for f in fact_backend.facts.list_facts(user_id)] == ["fact mine"]
    assert [f.text for f in fact_backend.facts.list_facts(other)] == ["fact theirs"]


def test_the_same_idempotency_key_is_stored_once_per_user(
    fact_backend: FactBackend, user_id: str
) -> None:
    facts = fact_backend.facts
    assert facts.save_extraction(unique("task"), user_id, [fact("k1")])
    assert facts.save_extraction(unique("task"), user_id, [fact("k1"), fact("k2")])
    assert facts.save_extraction(unique("task"), unique("user"), [fact("k1")])
    assert sorted(f.text for f in facts.list_facts(user_id)) == ["fact k1", "fact k2"]


def test_a_fact_about_a_person_of_the_user(fact_backend: FactBackend, user_id: str) -> None:
    anna = person(user_id, "Anna")
    fact_backend.contacts.add_person(anna)
    about = fact("anna", subject_entity_id=anna.id, relation_to_user="friend")
    assert fact_backend.facts.save_extraction(unique("task"), user_id, [about])
    [stored] = fact_backend.facts.list_facts(user_id)
    assert stored.subject_entity_id == anna.id


@pytest.mark.parametrize(
    "bad",
    [
        {"relation_to_user": "friend"},  # about nobody: an orphan
        {"type": "Allergy", "confidence": 0.5},  # health facts need confidence >= 0.9
        {"subject_entity_id": str(uuid.uuid4()), "relation_to_user": "friend"},  # no such person
    ],
    ids=["orphan", "unsure-health-fact", "unknown-person"],
)
def test_a_refused_fact_rejects_the_whole_extraction(
    fact_backend: FactBackend, user_id: str, bad: dict[str, Any]
) -> None:
    task = unique("task")
    with pytest.raises(DataRejected):
        fact_backend.facts.save_extraction(task, user_id, [fact("good"), fact("bad", **bad)])
    assert fact_backend.facts.list_facts(user_id) == []
    # Nothing was recorded, so the task can be retried once its facts are fixed.
    assert fact_backend.facts.save_extraction(task, user_id, [fact("good")]) is True


def test_a_fact_cannot_name_another_users_person(fact_backend: FactBackend, user_id: str) -> None:
    stranger = person(unique("user"), "Stranger")
    fact_backend.contacts.add_person(stranger)
    about = fact("x", subject_entity_id=stranger.id, relation_to_user="friend")
    with pytest.raises(DataRejected):
        fact_backend.facts.save_extraction(unique("task"), user_id, [about])


def test_a_sure_health_fact_is_accepted(fact_backend: FactBackend, user_id: str) -> None:
    sure = fact("nuts", type="Allergy", confidence=0.95, text="allergic to nuts")
    assert fact_backend.facts.save_extraction(unique("task"), user_id, [sure])
    assert [f.type for f in fact_backend.facts.list_facts(user_id)] == ["Allergy"]


# -- contacts ---------------------------------------------------------------------------------
def test_persons_are_listed_per_user_by_name(fact_backend: FactBackend, user_id: str) -> None:
    contacts = fact_backend.contacts
    bob = person(user_id, "Bob", aliases=["Bobby", "Robert"], role_to_user="sibling")
    anna = person(user_id, "Anna")
    for p in (bob, anna, person(unique("user"), "Someone else")):
        contacts.add_person(p)
    assert contacts.list_persons(user_id) == [anna, bob]


def test_adding_a_person_again_changes_nothing(fact_backend: FactBackend, user_id: str) -> None:
    anna = person(user_id, "Anna")
    fact_backend.contacts.add_person(anna)
    fact_backend.contacts.add_person(anna.model_copy(update={"display_name": "Changed"}))
    assert fact_backend.contacts.list_persons(user_id) == [anna]


@pytest.mark.parametrize(
    "bad", [{"role_to_user": "boss"}, {"id": "not-a-uuid"}], ids=["role", "id"]
)
def test_an_invalid_person_is_refused(
    fact_backend: FactBackend, user_id: str, bad: dict[str, Any]
) -> None:
    with pytest.raises(DataRejected):
        fact_backend.contacts.add_person(person(user_id, "X", **bad))
    assert fact_backend.contacts.list_persons(user_id) == []
