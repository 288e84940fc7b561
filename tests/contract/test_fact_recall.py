"""FactStore.recall: the hybrid retrieval's candidates (dense, keyword over the blind index,
temporal window), "as of" a moment, expiry. Fake and PostgreSQL alike; the term statistics
the triggers keep are checked against a recount on PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest

from shared.conversation.terms import terms
from shared.models.memory import RecallQuery, SemanticQuery, Supersession, TemporalQuery
from shared.ports import RecallCandidate
from tests.contract.conftest import FactBackend, unique
from tests.contract.fact_builders import (
    CURRENT,
    MODEL,
    T0,
    about,
    apply,
    axis,
    days,
    draft,
    person,
    with_similarity,
)


def recall(backend: FactBackend, user_id: str, text: str = "", **changes: Any) -> dict[str, Any]:
    now = changes.pop("now", T0)
    values: dict[str, Any] = {"embedding": axis(), "embedding_model": MODEL, "terms": terms(text)}
    found = backend.facts.recall(user_id, RecallQuery.model_validate(values | changes), now)
    texts = {f.id: f.text for f in backend.facts.facts_by_id(user_id, [c.fact_id for c in found])}
    return {texts[c.fact_id]: c for c in found}


def test_the_keyword_channel_finds_a_rare_name_the_embedding_misses(
    fact_backend: FactBackend, user_id: str
) -> None:
    apply(
        fact_backend,
        user_id,
        new_facts=[
            draft("near", text="I like long walks", embedding=with_similarity(0.95)),
            draft("oskar", text="Oskar repairs my bicycle", embedding=with_similarity(-0.5)),
            draft("bike", text="my bicycle is blue", embedding=with_similarity(0.1)),
        ],
    )
    found = recall(fact_backend, user_id, "Who is Oskar?", pool=1)
    oskar: RecallCandidate = found["Oskar repairs my bicycle"]
    assert oskar.dense_score is None and oskar.keyword_score is not None
    assert oskar.similarity == pytest.approx(-0.5, abs=1e-4)
    assert found["I like long walks"].dense_score == pytest.approx(0.95, abs=1e-4)
    assert found["I like long walks"].keyword_score is None
    assert "my bicycle is blue" not in found  # neither channel's best
    both = recall(fact_backend, user_id, "Oskar bicycle", pool=5)
    assert both["Oskar repairs my bicycle"].keyword_score > both["my bicycle is blue"].keyword_score
    assert recall(fact_backend, user_id, "", pool=1).keys() == {"I like long walks"}


def test_each_candidate_reads_the_fact_facts_by_id_reads(
    fact_backend: FactBackend, user_id: str
) -> None:
    """What the store sent with a candidate decrypts to the stored fact (text, marker,
    subject, times), so the kept ones need no second read."""
    leo = person(user_id, "Leo")
    trip = about(leo, "trip", text="Leo flies to Oslo", temporal_marker="next Friday",
                 time_anchor=T0 + days(4), durability="short")  # fmt: skip
    walks = draft("near", text="I like long walks", embedding=with_similarity(0.9))
    apply(fact_backend, user_id, new_persons=[leo], new_facts=[trip, walks])
    query = {"embedding": axis(), "embedding_model": MODEL, "terms": terms("Oslo walks")}
    found = fact_backend.facts.recall(user_id, RecallQuery.model_validate(query), T0)
    stored = fact_backend.facts.facts_by_id(user_id, [c.fact_id for c in found])
    assert len(found) == 2
    assert [c.read() if c.read else None for c in found] == stored
    assert {f.temporal_marker for f in stored} == {"next Friday", None}


def test_rarer_terms_weigh_more(fact_backend: FactBackend, user_id: str) -> None:
    common = [draft(f"c{i}", text=f"Lisbon note {i}") for i in range(6)]
    rare = draft("rare", text="Lisbon Alfama tram")
    apply(fact_backend, user_id, new_facts=[*common, rare])
    found = recall(fact_backend, user_id, "tram Lisbon", pool=3)
    scores = {text: c.keyword_score for text, c in found.items() if c.keyword_score}
    assert max(scores, key=lambda text: scores[text]) == "Lisbon Alfama tram"


def test_the_temporal_channel_reads_the_window(fact_backend: FactBackend, user_id: str) -> None:
    apply(
        fact_backend,
        user_id,
        new_facts=[
            draft("in", text="dentist", time_anchor=T0 + days(2), embedding=with_similarity(0)),
            draft("out", text="concert", time_anchor=T0 + days(20), embedding=with_similarity(0)),
        ],
    )
    found = recall(fact_backend, user_id, pool=1, window=(T0 + days(1), T0 + days(3)))
    assert found["dentist"].in_window
    assert "concert" not in found or not found["concert"].in_window


def test_as_of_reads_the_versions_valid_then(fact_backend: FactBackend, user_id: str) -> None:
    apply(fact_backend, user_id, new_facts=[draft("city", text="I live in Bern")])
    [old] = fact_backend.facts.list_facts(user_id, CURRENT)
    later = [Supersession(old_fact_id=old.id, replacement=draft("city2", text="I live in Basel"))]
    apply(fact_backend, user_id, now=T0 + days(10), supersessions=later)
    assert set(recall(fact_backend, user_id, "live", now=T0 + days(11))) == {"I live in Basel"}
    before = recall(fact_backend, user_id, "live", now=T0 + days(11), as_of=T0 + days(5))
    assert set(before) == {"I live in Bern"}
    assert recall(fact_backend, user_id, "live", as_of=T0 - days(1)) == {}


def test_an_expired_fact_leaves_retrieval_at_once(fact_backend: FactBackend, user_id: str) -> None:
    leo = person(user_id, "Leo")
    apply(
        fact_backend,
        user_id,
        new_persons=[leo],
        new_facts=[
            draft("tired", text="I am tired today", durability="short"),
            about(leo, "party", text="Leo party", durability="short", time_anchor=T0 + days(30)),
            draft("name", text="my name is Ada"),
        ],
    )
    [tired] = [f for f in fact_backend.facts.list_facts(user_id, CURRENT) if "tired" in f.text]
    assert tired.expires_at == T0 + days(7)
    week = T0 + days(8)
    assert set(recall(fact_backend, user_id, "tired party name", now=week)) == {
        "Leo party",  # about a day a month ahead: lives a week past it
        "my name is Ada",
    }
    query = SemanticQuery(embedding=axis(), embedding_model=MODEL, min_similarity=-1)
    assert {s.fact.text for s in fact_backend.facts.search(user_id, query, week)} == {
        "Leo party",
        "my name is Ada",
    }
    window = TemporalQuery(start=T0 - days(1), end=T0 + days(60), stated=True, at=week)
    assert {f.text for f in fact_backend.facts.in_window(user_id, window)} == {
        "Leo party",
        "my name is Ada",
    }


def test_recall_never_shows_another_users_facts(fact_backend: FactBackend, user_id: str) -> None:
    apply(fact_backend, user_id, new_facts=[draft("mine", text="Zebra crossing")])
    other = unique("user")
    apply(fact_backend, other, new_facts=[draft("theirs", text="Zebra stripes")])
    assert set(recall(fact_backend, other, "zebra")) == {"Zebra stripes"}
    assert set(recall(fact_backend, user_id, "zebra", privacy_mode=True)) == {"Zebra crossing"}


@pytest.mark.stack
def test_the_term_statistics_follow_every_write(fact_backend: FactBackend, user_id: str) -> None:
    """The triggers' counts equal a recount of the current facts after inserts, a
    supersession, an expiry, a deletion and the erasure of the user."""
    db = fact_backend.database
    if db is None:
        pytest.skip("the statistics live in PostgreSQL")
    apply(
        fact_backend,
        user_id,
        new_facts=[
            draft("a", text="Anna plays cello cello"),
            draft("b", text="Anna bakes bread", durability="short"),
        ],
    )
    [a, b] = sorted(fact_backend.facts.list_facts(user_id, CURRENT), key=lambda f: f.text)
    apply(fact_backend, user_id, supersessions=[Supersession(old_fact_id=a.id,
          replacement=draft("a2", text="Anna plays violin"))])  # fmt: skip
    assert fact_backend.expiry is not None
    fact_backend.expiry.expire_due(T0 + days(8), 1000)
    assert _stats(db, user_id) == _recount(db, user_id) != ({}, (0, 0))
    fact_backend.facts.delete_fact(user_id, b.id)
    assert _stats(db, user_id) == _recount(db, user_id)
    fact_backend.facts.delete_user(user_id, T0)
    assert _stats(db, user_id) == ({}, None)


def _stats(db: Any, user_id: str) -> tuple[dict[int, int], tuple[int, int] | None]:
    with db.transaction() as cur:
        cur.execute("SELECT term, docs FROM fact_terms WHERE user_id = %s", (user_id,))
        docs = {int(t): int(n) for t, n in cur.fetchall()}
        cur.execute("SELECT docs, length FROM fact_term_totals WHERE user_id = %s", (user_id,))
        row = cur.fetchone()
        # the narrow keyword rows are exactly the current facts' (same terms, same expiry)
        cur.execute(
            "SELECT count(*) FROM facts f FULL JOIN (SELECT * FROM fact_keywords"
            " WHERE user_id = %s) k ON k.fact_id = f.id WHERE (f.user_id = %s"
            " AND f.valid_to IS NULL AND cardinality(f.terms) > 0) IS DISTINCT FROM"
            " (k.fact_id IS NOT NULL AND k.terms = f.terms"
            " AND k.expires_at IS NOT DISTINCT FROM f.expires_at)"
            " AND (f.user_id = %s OR k.user_id = %s)",
            (user_id, user_id, user_id, user_id),
        )
        assert cur.fetchone()[0] == 0, "fact_keywords out of step with the current facts"
    return docs, None if row is None else (int(row[0]), int(row[1]))


def _recount(db: Any, user_id: str) -> tuple[dict[int, int], tuple[int, int] | None]:
    with db.transaction() as cur:
        cur.execute(
            "SELECT t, count(DISTINCT id) FROM facts, unnest(terms) t"
            " WHERE user_id = %s AND valid_to IS NULL GROUP BY t",
            (user_id,),
        )
        docs = {int(t): int(n) for t, n in cur.fetchall()}
        cur.execute(
            "SELECT count(*), coalesce(sum(cardinality(terms)), 0) FROM facts"
            " WHERE user_id = %s AND valid_to IS NULL AND cardinality(terms) > 0",
            (user_id,),
        )
        n, length = cur.fetchone()
    return docs, (int(n), int(length)) if n else None
