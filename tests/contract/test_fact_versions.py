"""A fact's versions (listed, restored), the expiry job, and session summaries. Fake and
PostgreSQL alike."""

from __future__ import annotations

from datetime import datetime

import pytest

from shared.errors import DataRejected
from shared.models.memory import RecallQuery, Reinforcement, SessionNote, Supersession
from tests.contract.conftest import FactBackend, unique
from tests.contract.fact_builders import CURRENT, HISTORY, MODEL, T0, apply, axis, days, draft


def _chain(backend: FactBackend, user_id: str) -> list[str]:
    """Supersede "v1" twice: v1 -> v2 -> v3; returns their ids, oldest first."""
    apply(backend, user_id, new_facts=[draft("v1", text="I work at Acme")])
    ids = [backend.facts.list_facts(user_id, CURRENT)[0].id]
    for n, key in enumerate(("v2", "v3"), start=1):
        change = Supersession(old_fact_id=ids[-1], replacement=draft(key, text=f"job {key}"))
        apply(backend, user_id, now=T0 + days(n), supersessions=[change])
        ids.append(backend.facts.list_facts(user_id, CURRENT)[0].id)
    return ids


def test_versions_list_the_whole_chain_latest_first(
    fact_backend: FactBackend, user_id: str
) -> None:
    ids = _chain(fact_backend, user_id)
    for any_version in ids:
        versions = fact_backend.facts.versions(user_id, any_version)
        assert [v.id for v in versions] == ids[::-1]
    [latest, middle, _] = fact_backend.facts.versions(user_id, ids[0])
    assert latest.valid_to is None and latest.ended_by is None
    assert (middle.ended_by, middle.valid_to) == ("superseded", T0 + days(2))
    assert fact_backend.facts.versions(unique("user"), ids[0]) == []
    assert fact_backend.facts.versions(user_id, "not-a-uuid") == []


def test_restoring_an_earlier_version_appends_it_as_current(
    fact_backend: FactBackend, user_id: str
) -> None:
    ids = _chain(fact_backend, user_id)
    when = T0 + days(5)
    restored = fact_backend.facts.restore_version(user_id, ids[0], when)
    assert restored is not None
    assert (restored.text, restored.valid_from, restored.valid_to) == ("I work at Acme", when, None)
    assert [f.id for f in fact_backend.facts.list_facts(user_id, CURRENT)] == [restored.id]
    versions = fact_backend.facts.versions(user_id, ids[1])
    assert [v.id for v in versions] == [restored.id, *ids[::-1]]
    assert versions[1].valid_to == when and versions[1].ended_by == "superseded"
    # a retry changes nothing; another user's id is nobody's
    again = fact_backend.facts.restore_version(user_id, ids[0], when + days(1))
    assert again is not None and again.id == restored.id
    assert len(fact_backend.facts.list_facts(user_id, HISTORY)) == 4
    assert fact_backend.facts.restore_version(unique("user"), ids[0], when) is None
    assert fact_backend.facts.restore_version(user_id, "nope", when) is None


def test_a_restore_never_makes_two_current_facts_say_the_same(
    fact_backend: FactBackend, user_id: str
) -> None:
    ids = _chain(fact_backend, user_id)
    apply(fact_backend, user_id, new_facts=[draft("v1", text="I work at Acme (again)")])
    before = fact_backend.facts.list_facts(user_id, HISTORY)
    with pytest.raises(DataRejected):
        fact_backend.facts.restore_version(user_id, ids[0], T0 + days(9))
    assert fact_backend.facts.list_facts(user_id, HISTORY) == before


def test_the_expiry_job_closes_facts_whose_durability_ran_out(
    fact_backend: FactBackend, user_id: str
) -> None:
    expiry = fact_backend.expiry
    assert expiry is not None
    apply(
        fact_backend,
        user_id,
        new_facts=[
            draft("short", text="short", durability="short"),  # 7 days
            draft("medium", text="medium", durability="medium"),  # 42 days
            draft("long", text="long", durability="long", time_anchor=T0 + days(30)),
            draft("durable", text="durable"),
        ],
    )
    by_text = {f.text: f for f in fact_backend.facts.list_facts(user_id, CURRENT)}
    seen_again = T0 + days(5)
    apply(
        fact_backend,
        user_id,
        now=seen_again,
        reinforcements=[Reinforcement(fact_id=by_text["short"].id, confidence=0.9)],
    )
    assert _closed(fact_backend, user_id, T0 + days(10)) == {}  # seen again on day 5
    assert _closed(fact_backend, user_id, T0 + days(13)) == {"short": seen_again + days(7)}
    assert _closed(fact_backend, user_id, T0 + days(400)) == {
        "short": seen_again + days(7),
        "medium": T0 + days(42),
        "long": T0 + days(30 + 182),
    }
    assert {f.text for f in fact_backend.facts.list_facts(user_id, CURRENT)} == {"durable"}
    closed = {f.text: f for f in fact_backend.facts.list_facts(user_id, HISTORY)}
    assert {closed[t].ended_by for t in ("short", "medium", "long")} == {"expired"}
    again = expiry.expire_due(T0 + days(500), 1000)
    assert user_id not in again.user_ids


def _closed(backend: FactBackend, user_id: str, now: datetime) -> dict[str, datetime | None]:
    assert backend.expiry is not None
    result = backend.expiry.expire_due(now, 1000)
    facts = backend.facts.list_facts(user_id, HISTORY)
    if any(f.ended_by == "expired" for f in facts):
        assert user_id in result.user_ids
    return {f.text: f.valid_to for f in facts if f.ended_by == "expired"}


def _note(chat: str, until: datetime, text: str = "we planned the Lisbon trip") -> SessionNote:
    return SessionNote(chat_id=chat, summary=text, started_at=T0, covers_until=until)


def test_session_summaries_are_replaced_as_they_grow(
    fact_backend: FactBackend, user_id: str
) -> None:
    sessions = fact_backend.sessions
    assert sessions is not None
    apply(fact_backend, user_id, new_facts=[draft("key", text="so the user has a data key")])
    assert sessions.put_summary(user_id, _note("c1", T0 + days(1)), axis(), MODEL)
    assert not sessions.put_summary(user_id, _note("c1", T0, "older"), axis(), MODEL)
    grown = _note("c1", T0 + days(2), "we planned Lisbon and booked the tram tour")
    assert sessions.put_summary(user_id, grown.model_copy(update={"started_at": T0 + days(1)}),
                                axis(), MODEL)  # fmt: skip
    assert sessions.put_summary(user_id, _note("c2", T0 + days(3), "tax forms"), [0.0, 1, 0], MODEL)
    query = RecallQuery(embedding=axis(), embedding_model=MODEL)
    found = sessions.recall_sessions(user_id, query, None)
    assert [(c.note.chat_id, c.note.summary) for c in found] == [
        ("c1", grown.summary),
        ("c2", "tax forms"),
    ]
    assert found[0].note.started_at == T0  # the oldest message stays the first covered
    assert found[0].note.covers_until == grown.covers_until
    assert found[1].embedding.tolist() == [0.0, 1.0, 0.0]
    assert found[0].similarity == pytest.approx(1.0)
    window = (T0 + days(2.5), T0 + days(4))
    assert [c.note.chat_id for c in sessions.recall_sessions(user_id, query, window)] == ["c2"]
    assert sessions.recall_sessions(unique("user"), query, None) == []
    fact_backend.facts.delete_user(user_id, T0)
    assert sessions.recall_sessions(user_id, query, None) == []
