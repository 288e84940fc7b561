"""Isolation, erasure and encryption of the fact system.

Cross-user isolation and account deletion run on both backends; the guarantees that live in
the database itself (constraints refusing a direct INSERT, no plaintext in a dump, ciphertext
bound to its row's user) are checked on PostgreSQL only.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from pg8000.exceptions import DatabaseError
from pgvector import Vector

from shared.adapters.keyring_local import LocalKek
from shared.adapters.postgres import Database, sqlstate
from shared.adapters.postgres_contacts import PostgresContactStore
from shared.adapters.postgres_facts import PostgresFactStore
from shared.adapters.postgres_keyring import PostgresKeyRing
from shared.adapters.postgres_pending import PostgresPendingStore
from shared.errors import DataRejected
from shared.models.memory import (
    ExtractionChanges,
    Reinforcement,
    SemanticQuery,
    Supersession,
    TaskStatus,
    TemporalQuery,
)
from tests.contract.conftest import FactBackend, unique
from tests.contract.fact_builders import (
    CURRENT,
    HISTORY,
    MODEL,
    T0,
    about,
    apply,
    axis,
    days,
    draft,
    pending,
    person,
)


def everything_of(backend: FactBackend, user_id: str, item_ids: list[str]) -> tuple[Any, ...]:
    return (
        backend.facts.list_facts(user_id, HISTORY),
        backend.contacts.list_persons(user_id),
        backend.pending.list_pending(user_id),
        [backend.pending.get_pending(user_id, i) for i in item_ids],
    )


def test_another_user_can_never_read_or_change_a_users_rows(
    fact_backend: FactBackend, user_id: str
) -> None:
    facts, contacts, pend = fact_backend.facts, fact_backend.contacts, fact_backend.pending
    anna, item = person(user_id, "Anna"), pending(user_id)
    mine = [draft("me", embedding=axis(), time_anchor=T0), about(anna, "anna", embedding=axis())]
    apply(fact_backend, user_id, new_persons=[anna], new_facts=mine, pending=[item])
    other = unique("user")
    bea = person(other, "Bea")
    apply(fact_backend, other, new_persons=[bea], new_facts=[draft("theirs")])
    [theirs] = facts.list_facts(other, CURRENT)
    before = everything_of(fact_backend, user_id, [item.id])
    ids = [f.id for f in facts.list_facts(user_id, HISTORY)]

    # reads: nothing of the user's, whatever the id or filter
    assert [f.id for f in facts.list_facts(other, HISTORY)] == [theirs.id]
    assert all(facts.get_fact(other, i) is None for i in ids)
    assert facts.current_facts(other, [None, anna.id]) == [theirs]
    q = SemanticQuery(embedding=axis(), embedding_model=MODEL, min_similarity=-1)
    assert [s.fact.id for s in facts.search(other, q, T0)] == [theirs.id]
    assert [s.fact.id for s in facts.nearest(other, axis(), MODEL, 10)] == [theirs.id]
    assert facts.in_window(other, TemporalQuery(start=T0 - days(1), end=T0 + days(1))) == []
    assert contacts.get_person(other, anna.id) is None
    assert contacts.find_by_name(other, "Anna") == []
    assert [p.id for p in contacts.list_persons(other)] == [bea.id]
    assert pend.get_pending(other, item.id) is None
    assert pend.list_pending(other) == []

    # writes: refused, or no effect
    assert facts.correct_fact(other, ids[0], draft("hijack"), T0) is None
    assert not facts.delete_fact(other, ids[0])
    assert facts.reassign_facts(other, ids, bea.id) == 0
    assert facts.reassign_facts(other, [theirs.id], anna.id) == 0
    with pytest.raises(DataRejected):
        apply(
            fact_backend,
            other,
            supersessions=[Supersession(old_fact_id=ids[0], replacement=draft("x"))],
        )
    with pytest.raises(DataRejected):
        apply(fact_backend, other, new_facts=[about(anna, "steal")])
    with pytest.raises(DataRejected):
        apply(fact_backend, other, pending=[pending(other, conflicting_fact_id=ids[0])])
    apply(fact_backend, other, reinforcements=[Reinforcement(fact_id=i, confidence=1) for i in ids])
    assert not contacts.update_person(
        anna.model_copy(update={"user_id": other, "display_name": "X"})
    )
    assert not contacts.merge_persons(other, bea.id, anna.id)
    assert not contacts.merge_persons(other, anna.id, bea.id)
    assert not contacts.delete_person(other, anna.id)
    contacts.add_person(anna.model_copy(update={"user_id": other}))  # its id is taken: no-op
    assert [p.id for p in contacts.list_persons(other)] == [bea.id]
    assert pend.resolve_pending(other, item.id, T0) is None
    facts.delete_user(other, T0)

    assert everything_of(fact_backend, user_id, [item.id]) == before


def test_deleting_a_user_leaves_nothing_behind(fact_backend: FactBackend, user_id: str) -> None:
    anna = person(user_id, "Anna", aliases=["Annie"])
    apply(fact_backend, user_id, new_persons=[anna], new_facts=[draft("a"), about(anna, "b")])
    [a] = [f for f in fact_backend.facts.list_facts(user_id, CURRENT) if f.text == "fact a"]
    later = [Supersession(old_fact_id=a.id, replacement=draft("a2"))]
    apply(
        fact_backend,
        user_id,
        supersessions=later,
        pending=[pending(user_id, conflicting_fact_id=a.id)],
    )
    keep = unique("user")
    apply(fact_backend, keep, new_persons=[person(keep, "Kept")], new_facts=[draft("kept")])
    kept = everything_of(fact_backend, keep, [])

    fact_backend.facts.delete_user(user_id, T0)

    assert everything_of(fact_backend, user_id, []) == ([], [], [], [])
    assert fact_backend.contacts.find_by_name(user_id, "Annie") == []
    assert everything_of(fact_backend, keep, []) == kept
    if fact_backend.database is not None:
        assert rows_of(fact_backend.database, user_id) == {}


def rows_of(db: Database, user_id: str) -> dict[str, int]:
    """Every table with a user_id column that still holds a row of the user."""
    with db.transaction() as cur:
        cur.execute(
            "SELECT table_name FROM information_schema.columns"
            " WHERE table_schema = 'public' AND column_name = 'user_id'"
        )
        tables = sorted(str(row[0]) for row in cur.fetchall())
        assert {"facts", "persons", "pending_items", "processed_tasks", "user_keys"} <= set(tables)
        counts = {}
        for table in tables:
            cur.execute(f"SELECT count(*) FROM {table} WHERE user_id = %s", (user_id,))
            counts[table] = int(cur.fetchone()[0])
    return {table: n for table, n in counts.items() if n}


# -- PostgreSQL only ----------------------------------------------------------------------------
@pytest.fixture
def real(database: Database, local_kek: LocalKek, stack_env: None) -> FactBackend:
    keys = PostgresKeyRing(database, local_kek)
    return FactBackend(
        PostgresFactStore(database, keys),
        PostgresContactStore(database, keys),
        PostgresPendingStore(database, keys),
        keys,
        database,
    )


_INSERT_FACT = (
    "INSERT INTO facts (id, user_id, subject_entity_id, relation_to_user, text_enc, type,"
    " confidence, scope, durability, sensitivity, valid_from, embedding, embedding_model,"
    " embedding_dim, idempotency_hash, last_seen_at, created_at, updated_at) VALUES"
    " (gen_random_uuid(), %s, %s, %s, '\\x01', %s, %s, 'avatar', 'durable', 'low', now(),"
    " %s, 'm', 3, decode(md5(random()::text), 'hex'), now(), now(), now())"
)


@pytest.mark.stack
@pytest.mark.parametrize(
    ("subject", "relation", "fact_type", "confidence", "refused_by"),
    [
        (None, "friend", "Other", 0.5, "facts_subject_or_self"),
        (None, "self", "Allergy", 0.5, "facts_sensitive_confidence"),
        (None, "self", "Health", 0.89, "facts_sensitive_confidence"),
        ("own", "self", "Other", 0.5, "facts_self_has_no_subject"),
        ("stranger", "friend", "Other", 0.5, "facts_subject_fkey"),
        (None, "self", "Gossip", 0.5, "facts_type_check"),
        ("own", "Tom from Quokka Works", "Other", 0.5, "facts_relation_to_user_check"),
    ],
)
def test_the_database_itself_refuses_a_bad_fact(
    real: FactBackend,
    user_id: str,
    subject: str | None,
    relation: str,
    fact_type: str,
    confidence: float,
    refused_by: str,
) -> None:
    """Straight SQL, past every adapter check: the schema alone refuses."""
    own, stranger = person(user_id, "Own"), person(unique("user"), "Stranger")
    real.contacts.add_person(own)
    real.contacts.add_person(stranger)
    subject_id = {"own": own.id, "stranger": stranger.id, None: None}[subject]
    assert real.database is not None
    with pytest.raises(DatabaseError) as refused, real.database.transaction() as cur:
        cur.execute(
            _INSERT_FACT, (user_id, subject_id, relation, fact_type, confidence, Vector(axis()))
        )
    assert sqlstate(refused.value) in {"23514", "23503"}
    assert refused_by in str(refused.value)


@pytest.mark.stack
def test_no_column_can_hold_user_text_in_clear(real: FactBackend) -> None:
    """Every text-like column of the fact system is an id, an enum or a model name; user text
    is bytea (ciphertext). A new text column must be added here on purpose."""
    allowed = {
        "facts": {"user_id", "avatar_id", "relation_to_user", "type", "scope", "durability",
                  "sensitivity", "source_chat_id", "source_turn_id", "source_message_id",
                  "embedding_model", "ended_by", "terms"},
        "persons": {"user_id", "avatar_id", "role_to_user"},
        "pending_items": {"user_id", "chat_id", "kind"},
        "session_summaries": {"user_id", "chat_id", "embedding_model"},
        "fact_terms": {"user_id"},
        "fact_keywords": {"user_id", "terms", "sensitivity", "embedding_model"},
        "fact_term_totals": {"user_id"},
        "user_keys": {"user_id", "kek_id"},
        "processed_tasks": {"task_key", "user_id"},
    }  # fmt: skip
    assert real.database is not None
    with real.database.transaction() as cur:
        cur.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = 'public' AND table_name = ANY(%s)"
            " AND data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY')"
            " AND NOT (data_type = 'ARRAY' AND udt_name = '_bytea')",
            (list(allowed),),
        )
        found = {(str(t), str(c)) for t, c in cur.fetchall()}
    assert found == {(t, c) for t, cols in allowed.items() for c in cols}


def test_work_queued_before_an_erasure_writes_nothing(
    fact_backend: FactBackend, user_id: str
) -> None:
    facts = fact_backend.facts
    assert facts.task_status(user_id, "never") == TaskStatus()
    done = unique("task")
    apply(fact_backend, user_id, task=done, new_facts=[draft("before")])
    assert facts.task_status(user_id, done).done

    facts.delete_user(user_id, T0)
    status = facts.task_status(user_id, done)
    assert not status.done and status.erased_at is not None  # the key went with the user
    changes = ExtractionChanges(new_facts=[draft("late")])
    queued_before = status.erased_at - timedelta(seconds=1)
    assert status.refuses(queued_before)
    assert not facts.apply_extraction(unique("task"), user_id, changes, T0, queued_before)
    assert facts.list_facts(user_id, HISTORY) == []
    queued_after = status.erased_at + timedelta(seconds=1)  # the user came back later
    assert facts.apply_extraction(unique("task"), user_id, changes, T0, queued_after)
    assert [f.text for f in facts.list_facts(user_id, HISTORY)] == ["fact late"]
    assert facts.task_status(unique("user"), done).erased_at is None  # others untouched
