"""FactStore contract: the in-memory fake and PostgreSQL behave the same.

Retrieval is in ``test_fact_retrieval.py``; isolation, erasure and encryption in
``test_fact_security.py``.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from shared.errors import DataRejected
from shared.models.memory import FactFilter, Reinforcement, Supersession
from tests.contract.conftest import FactBackend, unique
from tests.contract.fact_builders import (
    CURRENT,
    HISTORY,
    T0,
    about,
    apply,
    days,
    draft,
    person,
    texts,
)


# -- extraction tasks ---------------------------------------------------------------------------
def test_an_extraction_is_applied_once_per_task_key(
    fact_backend: FactBackend, user_id: str
) -> None:
    task = unique("task")
    assert apply(fact_backend, user_id, task=task, new_facts=[draft("a"), draft("b")])
    assert not apply(fact_backend, user_id, task=task, new_facts=[draft("c")])  # writes nothing
    assert texts(fact_backend, user_id) == ["fact a", "fact b"]
    [first] = [f for f in fact_backend.facts.list_facts(user_id, CURRENT) if f.text == "fact a"]
    assert (first.user_id, first.type, first.subject_entity_id) == (user_id, "Preference", None)
    assert (first.confidence, first.seen_count, first.valid_to) == (0.8, 1, None)
    assert first.valid_from == first.created_at == first.last_seen_at == T0
    assert (first.embedding_model, first.embedding_dim) == ("test-3", 3)


def test_an_empty_extraction_still_consumes_its_task_key(
    fact_backend: FactBackend, user_id: str
) -> None:
    task = unique("task")
    assert apply(fact_backend, user_id, task=task)
    assert not apply(fact_backend, user_id, task=task, new_facts=[draft("late")])
    assert fact_backend.facts.list_facts(user_id, HISTORY) == []


def test_every_field_of_a_draft_round_trips(fact_backend: FactBackend, user_id: str) -> None:
    full = draft(
        "full",
        text="Flight to Lisbon, gate B12",
        type="Travel",
        confidence=0.75,
        avatar_id="avatar-1",
        scope="workspace",
        durability="short",
        sensitivity="medium",
        temporal_marker="next Friday",
        time_anchor=T0 + days(4),
        source={"chat_id": "c1", "turn_id": "t1", "message_id": "m1"},
    )
    apply(fact_backend, user_id, new_facts=[full])
    [stored] = fact_backend.facts.list_facts(user_id, CURRENT)
    assert fact_backend.facts.get_fact(user_id, stored.id) == stored
    same = {"text", "type", "confidence", "avatar_id", "scope", "durability", "sensitivity"}
    same |= {"temporal_marker", "time_anchor", "source", "relation_to_user"}
    assert stored.model_dump(include=same) == full.model_dump(include=same)


def test_new_persons_and_facts_about_them_arrive_together(
    fact_backend: FactBackend, user_id: str
) -> None:
    leo = person(user_id, "Leo", role_to_user="child")
    apply(fact_backend, user_id, new_persons=[leo], new_facts=[about(leo, "pizza")])
    [stored] = fact_backend.facts.list_facts(user_id, CURRENT)
    assert (stored.subject_entity_id, stored.relation_to_user) == (leo.id, "child")
    assert [p.display_name for p in fact_backend.contacts.list_persons(user_id)] == ["Leo"]


def _bad_drafts(own_id: str, stranger_id: str) -> dict[str, dict[str, Any]]:
    return {
        "orphan": {"relation_to_user": "friend"},
        "self-with-a-subject": {"subject_entity_id": own_id},
        "unsure-allergy": {"type": "Allergy", "confidence": 0.5},
        "unsure-medical": {"type": "Medical", "confidence": 0.89},
        "unknown-person": {"subject_entity_id": str(uuid.uuid4()), "relation_to_user": "friend"},
        "another-users-person": {"subject_entity_id": stranger_id, "relation_to_user": "friend"},
        "not-a-uuid": {"subject_entity_id": "martin", "relation_to_user": "friend"},
        "free-text-relation": {"subject_entity_id": own_id, "relation_to_user": "my boss Tom"},
        "no-embedding": {"embedding": []},
        "naive-time-anchor": {"time_anchor": T0.replace(tzinfo=None)},
    }


@pytest.mark.parametrize("case", list(_bad_drafts("u", "s")))
def test_a_refused_fact_rejects_the_whole_extraction(
    fact_backend: FactBackend, user_id: str, case: str
) -> None:
    stranger = person(unique("user"), "Stranger")
    fact_backend.contacts.add_person(stranger)
    anna = person(user_id, "Anna")
    bad = draft("bad", **_bad_drafts(anna.id, stranger.id)[case])
    task = unique("task")
    with pytest.raises(DataRejected):
        apply(fact_backend, user_id, task=task, new_persons=[anna], new_facts=[draft("ok"), bad])
    assert fact_backend.facts.list_facts(user_id, HISTORY) == []
    assert fact_backend.contacts.list_persons(user_id) == []
    # Nothing was recorded, so the task can be retried once its facts are fixed.
    assert apply(fact_backend, user_id, task=task, new_facts=[draft("ok")])


def test_an_extraction_writes_only_its_own_users_rows(
    fact_backend: FactBackend, user_id: str
) -> None:
    with pytest.raises(DataRejected):
        apply(fact_backend, user_id, new_persons=[person(unique("user"), "Elsewhere")])


def test_a_sure_health_fact_is_accepted(fact_backend: FactBackend, user_id: str) -> None:
    sure = draft("nuts", type="Allergy", confidence=0.9, text="allergic to nuts")
    assert apply(fact_backend, user_id, new_facts=[sure])
    assert [f.type for f in fact_backend.facts.list_facts(user_id, CURRENT)] == ["Allergy"]


def test_an_idempotency_key_is_current_once_per_user(
    fact_backend: FactBackend, user_id: str
) -> None:
    apply(fact_backend, user_id, new_facts=[draft("k1")])
    apply(fact_backend, user_id, new_facts=[draft("k1", text="again"), draft("k2"), draft("k2")])
    apply(fact_backend, unique("user"), new_facts=[draft("k1")])
    assert texts(fact_backend, user_id) == ["fact k1", "fact k2"]


# -- supersession and reinforcement ---------------------------------------------------------
def test_a_supersession_closes_the_old_fact_and_keeps_it_as_history(
    fact_backend: FactBackend, user_id: str
) -> None:
    apply(fact_backend, user_id, new_facts=[draft("mail", text="mail is a@old.example")])
    [old] = fact_backend.facts.list_facts(user_id, CURRENT)
    new = draft("mail", text="mail is a@new.example")  # the same key: allowed once closed
    later = T0 + days(2)
    apply(
        fact_backend,
        user_id,
        now=later,
        supersessions=[Supersession(old_fact_id=old.id, replacement=new)],
    )
    [current] = fact_backend.facts.list_facts(user_id, CURRENT)
    assert (current.text, current.valid_from, current.valid_to) == (new.text, later, None)
    closed = fact_backend.facts.get_fact(user_id, old.id)
    assert closed is not None and (closed.valid_to, closed.text) == (later, old.text)
    assert texts(fact_backend, user_id, HISTORY) == [new.text, old.text]
    assert fact_backend.facts.current_facts(user_id, [None]) == [current]


@pytest.mark.parametrize("target", ["closed", "other-user", "unknown"])
def test_superseding_what_is_not_a_current_fact_rejects_the_extraction(
    fact_backend: FactBackend, user_id: str, target: str
) -> None:
    owner = unique("user") if target == "other-user" else user_id
    apply(fact_backend, owner, new_facts=[draft("x")])
    [fact] = fact_backend.facts.list_facts(owner, CURRENT)
    if target == "closed":
        replace = Supersession(old_fact_id=fact.id, replacement=draft("y"))
        apply(fact_backend, user_id, supersessions=[replace])
    old_id = str(uuid.uuid4()) if target == "unknown" else fact.id
    again = Supersession(old_fact_id=old_id, replacement=draft("z"))
    with pytest.raises(DataRejected):
        apply(fact_backend, user_id, supersessions=[again], new_facts=[draft("w")])
    assert "fact z" not in texts(fact_backend, user_id, HISTORY)
    assert "fact w" not in texts(fact_backend, user_id, HISTORY)
    assert fact_backend.facts.get_fact(owner, fact.id) is not None


def test_a_reinforcement_raises_confidence_and_counts_sightings(
    fact_backend: FactBackend, user_id: str
) -> None:
    apply(fact_backend, user_id, new_facts=[draft("tea", confidence=0.6)])
    [fact] = fact_backend.facts.list_facts(user_id, CURRENT)
    apply(
        fact_backend,
        user_id,
        now=T0 + days(1),
        reinforcements=[Reinforcement(fact_id=fact.id, confidence=0.7)],
    )
    apply(
        fact_backend,
        user_id,
        now=T0 + days(3),
        reinforcements=[Reinforcement(fact_id=fact.id, confidence=0.5)],
    )
    seen = fact_backend.facts.get_fact(user_id, fact.id)
    assert seen is not None
    assert (seen.confidence, seen.seen_count, seen.last_seen_at) == (0.7, 3, T0 + days(3))
    assert (seen.created_at, seen.valid_from, seen.text) == (T0, T0, "fact tea")


def test_a_reinforcement_of_another_users_fact_changes_nothing(
    fact_backend: FactBackend, user_id: str
) -> None:
    apply(fact_backend, user_id, new_facts=[draft("tea", confidence=0.6)])
    [fact] = fact_backend.facts.list_facts(user_id, CURRENT)
    assert apply(
        fact_backend,
        unique("user"),
        reinforcements=[Reinforcement(fact_id=fact.id, confidence=1.0)],
    )
    assert fact_backend.facts.get_fact(user_id, fact.id) == fact


# -- the user's control ---------------------------------------------------------------------------
def test_facts_are_listed_by_subject_type_and_history(
    fact_backend: FactBackend, user_id: str
) -> None:
    anna = person(user_id, "Anna")
    apply(
        fact_backend,
        user_id,
        new_persons=[anna],
        new_facts=[draft("me"), draft("job", type="Work"), about(anna, "anna", type="Work")],
    )
    [mine] = [f for f in fact_backend.facts.list_facts(user_id, CURRENT) if f.text == "fact me"]
    apply(
        fact_backend,
        user_id,
        supersessions=[Supersession(old_fact_id=mine.id, replacement=draft("me2"))],
    )

    def listed(**where: Any) -> list[str]:
        return texts(fact_backend, user_id, FactFilter.model_validate(where))

    assert listed(subject_id="self") == ["fact job", "fact me2"]
    assert listed(subject_id="self", include_history=True) == ["fact job", "fact me", "fact me2"]
    assert listed(subject_id=anna.id) == ["fact anna"]
    assert listed(fact_type="Work") == ["fact anna", "fact job"]
    assert listed(subject_id=str(uuid.uuid4())) == listed(subject_id="nobody") == []
    assert len(fact_backend.facts.list_facts(user_id, FactFilter(limit=2))) == 2


def test_current_facts_are_found_by_subject(fact_backend: FactBackend, user_id: str) -> None:
    anna, bob = person(user_id, "Anna"), person(user_id, "Bob")
    facts = [draft("me"), about(anna, "anna"), about(bob, "bob")]
    apply(fact_backend, user_id, new_persons=[anna, bob], new_facts=facts)
    found = fact_backend.facts.current_facts
    assert [f.text for f in found(user_id, [anna.id])] == ["fact anna"]
    assert sorted(f.text for f in found(user_id, [None, bob.id])) == ["fact bob", "fact me"]
    assert found(user_id, []) == found(user_id, ["not-a-uuid"]) == []


def test_a_correction_supersedes_the_fact(fact_backend: FactBackend, user_id: str) -> None:
    apply(fact_backend, user_id, new_facts=[draft("city", text="lives in Bern")])
    [old] = fact_backend.facts.list_facts(user_id, CURRENT)
    fixed = draft("city-fixed", text="lives in Basel")
    corrected = fact_backend.facts.correct_fact(user_id, old.id, fixed, T0 + days(1))
    assert corrected is not None and corrected.text == "lives in Basel"
    assert fact_backend.facts.list_facts(user_id, CURRENT) == [corrected]
    assert texts(fact_backend, user_id, HISTORY) == ["lives in Basel", "lives in Bern"]
    # the old version is closed: correcting it again finds nothing current
    assert fact_backend.facts.correct_fact(user_id, old.id, fixed, T0 + days(2)) is None
    assert fact_backend.facts.correct_fact(user_id, "nope", fixed, T0) is None


def test_a_refused_correction_changes_nothing(fact_backend: FactBackend, user_id: str) -> None:
    apply(fact_backend, user_id, new_facts=[draft("a")])
    [old] = fact_backend.facts.list_facts(user_id, CURRENT)
    with pytest.raises(DataRejected):
        fact_backend.facts.correct_fact(user_id, old.id, draft("b", relation_to_user="x"), T0)
    assert fact_backend.facts.list_facts(user_id, HISTORY) == [old]


def test_deleting_a_fact_erases_its_history(fact_backend: FactBackend, user_id: str) -> None:
    apply(fact_backend, user_id, new_facts=[draft("v1"), draft("other")])
    [v1] = [f for f in fact_backend.facts.list_facts(user_id, CURRENT) if f.text == "fact v1"]
    v2 = fact_backend.facts.correct_fact(user_id, v1.id, draft("v2"), T0 + days(1))
    assert v2 is not None
    v3 = fact_backend.facts.correct_fact(user_id, v2.id, draft("v3"), T0 + days(2))
    assert v3 is not None
    assert fact_backend.facts.delete_fact(user_id, v3.id)
    assert texts(fact_backend, user_id, HISTORY) == ["fact other"]
    assert not fact_backend.facts.delete_fact(user_id, v3.id)
    assert not fact_backend.facts.delete_fact(user_id, "not-a-uuid")


def test_deleting_an_old_version_keeps_the_current_one(
    fact_backend: FactBackend, user_id: str
) -> None:
    apply(fact_backend, user_id, new_facts=[draft("v1")])
    [v1] = fact_backend.facts.list_facts(user_id, CURRENT)
    v2 = fact_backend.facts.correct_fact(user_id, v1.id, draft("v2"), T0 + days(1))
    assert fact_backend.facts.delete_fact(user_id, v1.id)
    assert fact_backend.facts.list_facts(user_id, HISTORY) == [v2]


def test_facts_are_reassigned_to_another_person(fact_backend: FactBackend, user_id: str) -> None:
    boss = person(user_id, "Thomas", role_to_user="colleague")
    brother = person(user_id, "Thomas", role_to_user="sibling")
    facts = [about(boss, "a"), about(boss, "b"), draft("me")]
    apply(fact_backend, user_id, new_persons=[boss, brother], new_facts=facts)
    ids = {f.text: f.id for f in fact_backend.facts.list_facts(user_id, CURRENT)}
    moved = fact_backend.facts.reassign_facts(
        user_id, [ids["fact a"], ids["fact me"], "junk"], brother.id
    )
    assert moved == 2
    now_about = {
        f.text: (f.subject_entity_id, f.relation_to_user)
        for f in fact_backend.facts.list_facts(user_id, CURRENT)
    }
    assert now_about == {
        "fact a": (brother.id, "sibling"),
        "fact me": (brother.id, "sibling"),
        "fact b": (boss.id, "colleague"),
    }
    assert fact_backend.facts.reassign_facts(user_id, [ids["fact b"]], str(uuid.uuid4())) == 0
    assert fact_backend.facts.reassign_facts(user_id, [], brother.id) == 0
