"""PendingStore contract: facts held back for the user's answer, written by an extraction."""

from __future__ import annotations

import threading

import pytest

from shared.errors import DataRejected
from tests.contract.conftest import FactBackend, unique
from tests.contract.fact_builders import CURRENT, T0, apply, days, draft, pending, person


def test_an_extraction_holds_facts_back_until_answered(
    fact_backend: FactBackend, user_id: str
) -> None:
    son = person(user_id, "Martin", role_to_user="child")
    colleague = person(user_id, "Martin", role_to_user="colleague")
    maybe = person(user_id, "Martin", descriptors={"employer": "ACME"})
    held = pending(
        user_id,
        candidate_ids=[son.id, colleague.id],
        proposed_person=maybe,
        facts=[draft("plays", text="Martin plays chess", time_anchor=T0)],
    )
    apply(fact_backend, user_id, new_persons=[son, colleague], pending=[held])
    assert fact_backend.facts.list_facts(user_id, CURRENT) == []  # nothing stored yet
    assert fact_backend.pending.list_pending(user_id) == [held]
    assert fact_backend.pending.get_pending(user_id, held.id) == held


def test_pending_items_are_listed_open_oldest_first_per_chat(
    fact_backend: FactBackend, user_id: str
) -> None:
    late = pending(user_id, created_at=T0 + days(1))
    early = pending(user_id, created_at=T0)
    elsewhere = pending(user_id, chat_id="chat-2", created_at=T0 + days(2))
    done = pending(user_id, resolved_at=T0)
    apply(fact_backend, user_id, pending=[late, early, elsewhere, done])
    listed = fact_backend.pending.list_pending
    assert [i.id for i in listed(user_id)] == [early.id, late.id, elsewhere.id]
    assert [i.id for i in listed(user_id, "chat-1")] == [early.id, late.id]
    assert listed(user_id, "chat-3") == []
    assert fact_backend.pending.get_pending(user_id, done.id) == done


def test_an_item_is_resolved_exactly_once(fact_backend: FactBackend, user_id: str) -> None:
    held = pending(user_id)
    apply(fact_backend, user_id, pending=[held])
    winners = []
    barrier = threading.Barrier(4)

    def answer() -> None:
        barrier.wait()
        winners.append(fact_backend.pending.resolve_pending(user_id, held.id, T0 + days(1)))

    threads = [threading.Thread(target=answer) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    [resolved] = [w for w in winners if w is not None]
    assert resolved == held.model_copy(update={"resolved_at": T0 + days(1)})
    assert fact_backend.pending.list_pending(user_id) == []
    assert fact_backend.pending.resolve_pending(user_id, held.id, T0) is None
    assert fact_backend.pending.resolve_pending(user_id, "not-a-uuid", T0) is None


def test_a_conflict_names_a_current_fact_of_the_user(
    fact_backend: FactBackend, user_id: str
) -> None:
    apply(fact_backend, user_id, new_facts=[draft("mail", text="mail is a@old.example")])
    [fact] = fact_backend.facts.list_facts(user_id, CURRENT)
    conflict = pending(
        user_id,
        kind="fact_conflict",
        conflicting_fact_id=fact.id,
        facts=[draft("mail2", text="mail is a@new.example", type="Contact")],
    )
    apply(fact_backend, user_id, pending=[conflict])
    assert fact_backend.pending.list_pending(user_id) == [conflict]
    other = unique("user")
    theft = pending(other, kind="fact_conflict", conflicting_fact_id=fact.id)
    with pytest.raises(DataRejected):
        apply(fact_backend, other, pending=[theft])
    assert fact_backend.pending.list_pending(other) == []


def test_erasing_the_conflicting_fact_keeps_the_held_facts(
    fact_backend: FactBackend, user_id: str
) -> None:
    apply(fact_backend, user_id, new_facts=[draft("city")])
    [fact] = fact_backend.facts.list_facts(user_id, CURRENT)
    conflict = pending(user_id, kind="fact_conflict", conflicting_fact_id=fact.id)
    apply(fact_backend, user_id, pending=[conflict])
    assert fact_backend.facts.delete_fact(user_id, fact.id)
    [kept] = fact_backend.pending.list_pending(user_id)
    assert kept == conflict.model_copy(update={"conflicting_fact_id": None})
