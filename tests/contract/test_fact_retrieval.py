"""FactStore retrieval contract: semantic search (threshold, boost, decay, privacy, embedding
spaces), exact nearest neighbours, temporal windows. Fake and PostgreSQL alike."""

from __future__ import annotations

from typing import Any

import pytest

from shared.models.memory import Reinforcement, SemanticQuery, TemporalQuery
from tests.contract.conftest import FactBackend, unique
from tests.contract.fact_builders import (
    CURRENT,
    MODEL,
    T0,
    about,
    apply,
    at_angle,
    axis,
    days,
    draft,
    person,
    with_similarity,
)

HALF_LIFE = 180.0


def query(**changes: Any) -> SemanticQuery:
    values: dict[str, Any] = {
        "embedding": axis(),
        "embedding_model": MODEL,
        "half_life_days": HALF_LIFE,
    }
    return SemanticQuery.model_validate(values | changes)


def found(backend: FactBackend, user_id: str, **changes: Any) -> list[str]:
    now = changes.pop("now", T0)
    return [s.fact.text for s in backend.facts.search(user_id, query(**changes), now)]


@pytest.fixture
def scene(fact_backend: FactBackend, user_id: str) -> dict[str, str]:
    """fresh: similarity 0.95; old: 0.9 but last seen one half-life ago (decays to 0.45);
    leo: 0.4, about Leo (0.5 when Leo is boosted); far: 0.2, under the threshold."""
    leo = person(user_id, "Leo", role_to_user="child")
    apply(
        fact_backend,
        user_id,
        now=T0 - days(HALF_LIFE),
        new_facts=[draft("old", text="old", embedding=with_similarity(0.9))],
    )
    apply(
        fact_backend,
        user_id,
        new_persons=[leo],
        new_facts=[
            draft("fresh", text="fresh", embedding=with_similarity(0.95)),
            about(leo, "leo", text="leo", embedding=with_similarity(0.4)),
            draft("far", text="far", embedding=with_similarity(0.2)),
        ],
    )
    ids = {f.text: f.id for f in fact_backend.facts.list_facts(user_id, CURRENT)}
    return ids | {"leo-person": leo.id}


def test_search_ranks_by_decayed_similarity_above_the_threshold(
    fact_backend: FactBackend, user_id: str, scene: dict[str, str]
) -> None:
    assert found(fact_backend, user_id) == ["fresh", "old", "leo"]
    assert found(fact_backend, user_id, min_similarity=0.5) == ["fresh", "old"]
    assert found(fact_backend, user_id, limit=1) == ["fresh"]
    [top, old, _] = fact_backend.facts.search(user_id, query(), T0)
    assert top.similarity == pytest.approx(0.95, abs=1e-4)
    assert top.score == pytest.approx(0.95, abs=1e-4)  # seen just now: no decay
    assert old.similarity == pytest.approx(0.9, abs=1e-4)
    assert old.score == pytest.approx(0.45, abs=1e-4)  # one half-life old


def test_search_boosts_the_entities_of_the_turn(
    fact_backend: FactBackend, user_id: str, scene: dict[str, str]
) -> None:
    boosted = found(fact_backend, user_id, boost_subject_ids=[scene["leo-person"]])
    assert boosted == ["fresh", "leo", "old"]
    [_, leo, _] = fact_backend.facts.search(
        user_id, query(boost_subject_ids=[scene["leo-person"]], boost=0.1), T0
    )
    assert leo.score == pytest.approx(0.5, abs=1e-4)
    assert found(fact_backend, user_id, boost_subject_ids=["not-a-uuid"]) == ["fresh", "old", "leo"]


def test_decay_is_computed_at_query_time_and_reset_by_a_sighting(
    fact_backend: FactBackend, user_id: str, scene: dict[str, str]
) -> None:
    assert found(fact_backend, user_id, half_life_days=0) == ["fresh", "old", "leo"]
    # A year on, everything has decayed alike: similarity decides again.
    assert found(fact_backend, user_id, now=T0 + days(365)) == ["fresh", "old", "leo"]
    later = T0 + days(60)
    seen = Reinforcement(fact_id=scene["old"], confidence=0.5)
    apply(fact_backend, user_id, now=later, reinforcements=[seen])
    [first, second, _] = fact_backend.facts.search(user_id, query(), later)
    assert (first.fact.text, second.fact.text) == ("old", "fresh")  # 0.9 beats 0.95 * 0.79
    assert first.score == pytest.approx(0.9, abs=1e-4)


def test_privacy_mode_hides_highly_sensitive_facts(fact_backend: FactBackend, user_id: str) -> None:
    secret = draft("diag", text="diagnosis", type="Medical", confidence=0.95, sensitivity="high")
    apply(
        fact_backend, user_id, new_facts=[secret, draft("pub", text="public", sensitivity="medium")]
    )
    assert sorted(found(fact_backend, user_id)) == ["diagnosis", "public"]
    assert found(fact_backend, user_id, privacy_mode=True) == ["public"]
    window = TemporalQuery(start=T0 - days(1), end=T0 + days(1))
    anchored = draft("appt", text="appointment", sensitivity="high", time_anchor=T0)
    apply(fact_backend, user_id, new_facts=[anchored])
    assert [f.text for f in fact_backend.facts.in_window(user_id, window)] == ["appointment"]
    private = window.model_copy(update={"privacy_mode": True})
    assert fact_backend.facts.in_window(user_id, private) == []


def test_embedding_spaces_never_mix(fact_backend: FactBackend, user_id: str) -> None:
    apply(
        fact_backend,
        user_id,
        new_facts=[
            draft("same", text="same space"),
            draft("model", text="other model", embedding_model="other-3"),
            draft("dims", text="other dimension", embedding=at_angle(10, dims=4)),
        ],
    )
    assert found(fact_backend, user_id) == ["same space"]
    assert found(fact_backend, user_id, embedding_model="other-3") == ["other model"]
    assert found(fact_backend, user_id, embedding=axis(4)) == ["other dimension"]
    nearest = fact_backend.facts.nearest(user_id, axis(), MODEL, 10)
    assert [s.fact.text for s in nearest] == ["same space"]


def test_search_and_nearest_see_only_current_facts_of_the_user(
    fact_backend: FactBackend, user_id: str
) -> None:
    apply(fact_backend, user_id, new_facts=[draft("v1", text="v1", embedding=axis())])
    [v1] = fact_backend.facts.list_facts(user_id, CURRENT)
    fact_backend.facts.correct_fact(user_id, v1.id, draft("v2", text="v2"), T0)
    apply(fact_backend, unique("user"), new_facts=[draft("x", text="theirs", embedding=axis())])
    assert found(fact_backend, user_id) == ["v2"]
    assert [s.fact.text for s in fact_backend.facts.nearest(user_id, axis(), MODEL, 5)] == ["v2"]


def test_nearest_is_exact_and_ordered(fact_backend: FactBackend, user_id: str) -> None:
    angles = [50, 10, 170, 30, 90]
    apply(
        fact_backend,
        user_id,
        new_facts=[draft(f"a{a}", text=f"a{a}", embedding=at_angle(a)) for a in angles],
    )
    nearest = fact_backend.facts.nearest(user_id, axis(), MODEL, 4)
    assert [s.fact.text for s in nearest] == ["a10", "a30", "a50", "a90"]
    assert [s.score for s in nearest] == [s.similarity for s in nearest]
    assert nearest[-1].similarity == pytest.approx(0.0, abs=1e-6)
    assert fact_backend.facts.nearest(user_id, axis(), "unknown-model", 4) == []


def test_facts_anchored_in_a_window(fact_backend: FactBackend, user_id: str) -> None:
    mia = person(user_id, "Mia")
    apply(
        fact_backend,
        user_id,
        new_persons=[mia],
        new_facts=[
            draft("start", text="at start", time_anchor=T0),
            about(mia, "birthday", text="Mia's birthday", time_anchor=T0 + days(3)),
            draft("end", text="at end", time_anchor=T0 + days(7)),  # end is exclusive
            draft("before", text="before", time_anchor=T0 - days(1)),
            draft("none", text="no anchor"),
        ],
    )

    def window(**changes: Any) -> list[str]:
        q = TemporalQuery.model_validate({"start": T0, "end": T0 + days(7)} | changes)
        return [f.text for f in fact_backend.facts.in_window(user_id, q)]

    assert window() == ["at start", "Mia's birthday"]
    assert window(subject_ids=[None]) == ["at start"]
    assert window(subject_ids=[mia.id]) == ["Mia's birthday"]
    assert window(subject_ids=[]) == []
    assert window(limit=1) == ["at start"]
    assert window(start=T0.replace(tzinfo=None), end=(T0 + days(7)).replace(tzinfo=None)) == [
        "at start",
        "Mia's birthday",
    ]
