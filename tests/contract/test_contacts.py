"""ContactStore contract: persons, names found by keyed hash, merges, cascading deletes."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from shared.errors import DataRejected
from shared.models.memory import FactFilter, Person
from tests.contract.conftest import FactBackend, unique
from tests.contract.fact_builders import CURRENT, HISTORY, about, apply, draft, pending, person


def same_person(stored: Person | None, given: Person) -> bool:
    """Equal but for the timestamps the store fills in."""
    timestamps = {"created_at", "updated_at"}
    return stored is not None and stored.model_dump(exclude=timestamps) == given.model_dump(
        exclude=timestamps
    )


def test_persons_are_listed_per_user_by_name(fact_backend: FactBackend, user_id: str) -> None:
    contacts = fact_backend.contacts
    bob = person(user_id, "bob", aliases=["Bobby", "Robert"], role_to_user="sibling")
    anna = person(user_id, "Anna", descriptors={"age": "8", "city": "Bern"}, avatar_id="av")
    for p in (bob, anna, person(unique("user"), "Someone else")):
        contacts.add_person(p)
    listed = contacts.list_persons(user_id)
    assert [p.display_name for p in listed] == ["Anna", "bob"]  # case-insensitive order
    assert same_person(listed[0], anna) and same_person(listed[1], bob)
    assert listed[0].created_at is not None
    assert contacts.get_person(user_id, anna.id) == listed[0]
    assert contacts.get_person(user_id, "not-a-uuid") is None


@pytest.mark.parametrize(
    "role", ["grandparent", "grandchild", "aunt_uncle", "cousin", "niece_nephew", "in_law"]
)
def test_family_roles_are_stored_with_facts_about_them(
    fact_backend: FactBackend, user_id: str, role: str
) -> None:
    """The roles added for issue 28 pass both stores' closed vocabularies (the PostgreSQL
    check constraints of migration 0006), for the person and the facts about them."""
    rosa = person(user_id, "Rosa", role_to_user=role)
    fact_backend.contacts.add_person(rosa)
    apply(fact_backend, user_id, new_facts=[about(rosa, "lives", text="Rosa lives in Salerno")])
    [stored] = fact_backend.contacts.list_persons(user_id)
    assert stored.role_to_user == role
    [fact] = fact_backend.facts.list_facts(user_id, FactFilter(subject_id=rosa.id))
    assert fact.relation_to_user == role


def test_adding_a_person_again_changes_nothing(fact_backend: FactBackend, user_id: str) -> None:
    anna = person(user_id, "Anna")
    fact_backend.contacts.add_person(anna)
    fact_backend.contacts.add_person(anna.model_copy(update={"display_name": "Changed"}))
    [stored] = fact_backend.contacts.list_persons(user_id)
    assert same_person(stored, anna)


@pytest.mark.parametrize(
    "bad", [{"role_to_user": "boss"}, {"id": "not-a-uuid"}], ids=["role", "id"]
)
def test_an_invalid_person_is_refused(
    fact_backend: FactBackend, user_id: str, bad: dict[str, Any]
) -> None:
    valid = person(user_id, "X")
    invalid = Person.model_construct(**(valid.model_dump() | bad))  # past the model's checks
    with pytest.raises(DataRejected):
        fact_backend.contacts.add_person(invalid)
    assert fact_backend.contacts.list_persons(user_id) == []


@pytest.mark.parametrize(
    "written", ["Zoë Müller", "zoe muller", "  ZOE   MÜLLER ", "Zoe", "Z.", "Zoë Müller!", "«Zoe»"]
)
def test_a_person_is_found_by_a_normalised_name_or_alias(
    fact_backend: FactBackend, user_id: str, written: str
) -> None:
    zoe = person(user_id, "Zoë Müller", aliases=["Zoe", "Z."])
    fact_backend.contacts.add_person(zoe)
    fact_backend.contacts.add_person(person(user_id, "Zoey"))
    assert [p.id for p in fact_backend.contacts.find_by_name(user_id, written)] == [zoe.id]


def test_two_persons_of_one_name_are_both_found(fact_backend: FactBackend, user_id: str) -> None:
    son = person(user_id, "Martin", role_to_user="child", descriptors={"age": "8"})
    colleague = person(user_id, "Martin", role_to_user="colleague", aliases=["Martin B."])
    for p in (son, colleague):
        fact_backend.contacts.add_person(p)
    found = fact_backend.contacts.find_by_name(user_id, "martin")
    assert {p.id for p in found} == {son.id, colleague.id}
    assert fact_backend.contacts.find_by_name(user_id, "Mart") == []
    assert fact_backend.contacts.find_by_name(unique("user"), "Martin") == []


def test_a_person_is_renamed(fact_backend: FactBackend, user_id: str) -> None:
    contacts = fact_backend.contacts
    tom = person(user_id, "Tom", aliases=["Tommy"])
    contacts.add_person(tom)
    renamed = tom.model_copy(
        update={"display_name": "Thomas", "aliases": ["Tom"], "role_to_user": "colleague"}
    )
    assert contacts.update_person(renamed)
    assert same_person(contacts.get_person(user_id, tom.id), renamed)
    assert [p.id for p in contacts.find_by_name(user_id, "thomas")] == [tom.id]
    assert contacts.find_by_name(user_id, "Tommy") == []
    assert not contacts.update_person(person(user_id, "Nobody"))


def test_an_update_from_a_stale_read_changes_nothing(
    fact_backend: FactBackend, user_id: str
) -> None:
    """The compare-and-set under a conditional PATCH: only from the version last written."""
    contacts = fact_backend.contacts
    contacts.add_person(person(user_id, "Tom"))
    [read] = contacts.list_persons(user_id)
    assert read.updated_at is not None
    first = read.model_copy(update={"display_name": "Thomas"})
    assert contacts.update_person(first, unchanged_since=read.updated_at)
    second = read.model_copy(update={"display_name": "Tommy"})  # from the same, now stale read
    assert not contacts.update_person(second, unchanged_since=read.updated_at)
    stored = contacts.get_person(user_id, read.id)
    assert stored is not None and stored.display_name == "Thomas"
    assert stored.updated_at is not None and stored.updated_at > read.updated_at
    again = stored.model_copy(update={"display_name": "Tom"})
    assert contacts.update_person(again, unchanged_since=stored.updated_at)


def test_merging_moves_facts_and_names_at_once(fact_backend: FactBackend, user_id: str) -> None:
    keep = person(
        user_id, "Robert", aliases=["Rob"], role_to_user="sibling", descriptors={"age": "40"}
    )
    absorb = person(
        user_id, "Bobby", aliases=["rob", "Bob"], descriptors={"age": "?", "city": "Bern"}
    )
    facts = [about(keep, "k"), about(absorb, "a1"), about(absorb, "a2"), draft("me")]
    apply(fact_backend, user_id, new_persons=[keep, absorb], new_facts=facts)
    contacts = fact_backend.contacts

    assert contacts.merge_persons(user_id, keep.id, absorb.id)

    assert contacts.get_person(user_id, absorb.id) is None
    merged = contacts.get_person(user_id, keep.id)
    assert merged is not None
    assert (merged.display_name, merged.aliases) == ("Robert", ["Rob", "Bobby", "Bob"])
    assert merged.descriptors == {"age": "40", "city": "Bern"}
    assert [p.id for p in contacts.find_by_name(user_id, "bobby")] == [keep.id]
    about_keep = fact_backend.facts.list_facts(user_id, FactFilter(subject_id=keep.id))
    assert sorted(f.text for f in about_keep) == ["fact a1", "fact a2", "fact k"]
    assert {f.relation_to_user for f in about_keep} == {"sibling"}
    assert len(fact_backend.facts.list_facts(user_id, CURRENT)) == 4
    assert not contacts.merge_persons(user_id, keep.id, absorb.id)  # gone
    assert not contacts.merge_persons(user_id, keep.id, keep.id)
    assert not contacts.merge_persons(user_id, keep.id, "not-a-uuid")


def test_deleting_a_person_deletes_every_fact_about_them(
    fact_backend: FactBackend, user_id: str
) -> None:
    leo, mia = person(user_id, "Leo"), person(user_id, "Mia")
    facts = [about(leo, "l1"), about(leo, "l2"), about(mia, "m"), draft("me")]
    apply(fact_backend, user_id, new_persons=[leo, mia], new_facts=facts)
    [l1] = [f for f in fact_backend.facts.list_facts(user_id, CURRENT) if f.text == "fact l1"]
    fact_backend.facts.correct_fact(user_id, l1.id, about(leo, "l1b"), l1.created_at)
    conflict = pending(user_id, kind="fact_conflict", conflicting_fact_id=l1.id)
    apply(fact_backend, user_id, pending=[conflict])

    assert fact_backend.contacts.delete_person(user_id, leo.id)

    assert sorted(f.text for f in fact_backend.facts.list_facts(user_id, HISTORY)) == [
        "fact m",
        "fact me",
    ]
    assert [p.id for p in fact_backend.contacts.list_persons(user_id)] == [mia.id]
    held = fact_backend.pending.get_pending(user_id, conflict.id)
    assert held is not None and held.conflicting_fact_id is None  # kept, the conflict is moot
    assert not fact_backend.contacts.delete_person(user_id, leo.id)
    assert not fact_backend.contacts.delete_person(user_id, str(uuid.uuid4()))


def test_an_extraction_teaches_a_person_only_if_unchanged_since_read(
    fact_backend: FactBackend, user_id: str
) -> None:
    thomas = person(user_id, "Thomas")
    apply(fact_backend, user_id, new_persons=[thomas], new_facts=[about(thomas, "x")])
    [read] = fact_backend.contacts.find_by_name(user_id, "Thomas")
    taught = read.model_copy(update={"aliases": ["Tom"], "descriptors": {"city": "Bern"}})
    assert apply(fact_backend, user_id, learned_persons=[taught])
    [found] = fact_backend.contacts.find_by_name(user_id, "Tom")
    assert (found.id, found.aliases, found.descriptors) == (read.id, ["Tom"], {"city": "Bern"})

    stale = read.model_copy(update={"aliases": ["Tommy"]})  # read before the lesson above
    assert apply(fact_backend, user_id, learned_persons=[stale])  # the task still counts
    assert fact_backend.contacts.find_by_name(user_id, "Tommy") == []
    [still] = fact_backend.contacts.find_by_name(user_id, "Tom")
    assert still.aliases == ["Tom"]


def test_an_extraction_cannot_teach_another_users_person(
    fact_backend: FactBackend, user_id: str
) -> None:
    other = unique("user")
    theirs = person(other, "Bea")
    apply(fact_backend, other, new_persons=[theirs], new_facts=[about(theirs, "y")])
    [read] = fact_backend.contacts.find_by_name(other, "Bea")
    with pytest.raises(DataRejected):
        apply(fact_backend, user_id, learned_persons=[read.model_copy(update={"aliases": ["B"]})])
    assert fact_backend.contacts.find_by_name(other, "B") == []
