"""A new fact against the current ones: supersede, reinforce, hold for the user, or add."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import pytest

from shared.adapters.model_guard import override_allow_model_requests
from shared.conversation.slots import slots_of
from shared.fakes.scripted_llm import HashEmbedder
from shared.models.memory import Fact, FactDraft, PendingItem, ScoredFact
from shared.ports import Embedder
from shared.services.memory.conflicts import (
    ChangePlan,
    Proposal,
    duplicate_threshold,
    plan_changes,
    reinforced,
    same_statement,
)
from tests.unit.extraction_kit import NOW, USER

EMBEDDER = HashEmbedder(64)
ANNA = str(uuid.uuid4())


def stored(text: str, type: str = "Other", subject: str | None = None, **kw: object) -> Fact:
    return Fact.model_validate(
        {
            "id": str(uuid.uuid4()), "user_id": USER, "subject_entity_id": subject,
            "relation_to_user": "self" if subject is None else "sibling", "text": text,
            "type": type, "confidence": 0.9, "valid_from": NOW,
            "embedding_model": EMBEDDER.model_name, "embedding_dim": EMBEDDER.dimension,
            "last_seen_at": NOW, "created_at": NOW, "updated_at": NOW, **kw,
        }
    )  # fmt: skip


def draft(
    text: str, type: str = "Other", subject: str | None = None, confidence: float = 0.9
) -> FactDraft:
    return FactDraft(
        text=text,
        type=type,
        subject_entity_id=subject,
        relation_to_user="self" if subject is None else "sibling",
        confidence=confidence,
        embedding=EMBEDDER.embed([text])[0],
        embedding_model=EMBEDDER.model_name,
        idempotency_key=f"key:{text}",
    )


def plan(
    current: Sequence[Fact], *proposals: Proposal | FactDraft, embedder: Embedder = EMBEDDER
) -> ChangePlan:
    def nearest(new: FactDraft) -> list[ScoredFact]:
        vectors = embedder.embed([new.text, *(fact.text for fact in current)])
        first = vectors[0]
        scored = [
            ScoredFact(fact=fact, similarity=sim, score=sim)
            for fact, vector in zip(current, vectors[1:], strict=True)
            if (sim := sum(a * b for a, b in zip(first, vector, strict=True)))
        ]
        return sorted(scored, key=lambda s: s.similarity, reverse=True)[:5]

    def hold(new: FactDraft, old: Fact) -> PendingItem:
        return PendingItem(
            id=str(uuid.uuid4()), user_id=USER, kind="fact_conflict", facts=[new],
            conflicting_fact_id=old.id, created_at=NOW,
        )  # fmt: skip

    wrapped = [p if isinstance(p, Proposal) else Proposal(p) for p in proposals]
    return plan_changes(wrapped, current, nearest, hold)


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("Alice's email is Alice@ACME.com", ("email", "alice@acme.com")),
        ("Anna's phone number is +41 79 123 45 67", ("phone", "41791234567")),
        ("Alice works at ACME since March", ("employer", "acme")),
        ("Alice started a new job at Globex AG.", ("employer", "globex ag")),
        ("Alice moved to Basel in June", ("home", "basel")),
        ("Alice lives in New York", ("home", "new york")),
        ("Anna's son lives in Berlin", None),
        ("Alice likes jazz", None),
    ],
)
def test_slots(text: str, slot: tuple[str, str] | None) -> None:
    assert slots_of(text) == (dict([slot]) if slot else {})


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("Anna lives in Bern", "Anna lives in Bern, Switzerland", True),
        ("Alice works at ACME", "Alice works for ACME", True),
        ("Alice lives in Bern", "Alice lives in Basel", False),
        ("Alice has two children", "Alice has three children", False),
        ("Thomas loves jazz", "Thomas doesn't love jazz", False),
        ("Thomas loves jazz", "Thomas hates jazz", False),
        ("Anna's son is 8", "Anna's daughter is 8", False),
        ("Martin plays football on Saturdays", "Martin plays football every Saturday", True),
    ],
)
def test_distinguishing_words(a: str, b: str, same: bool) -> None:
    assert same_statement(a, b) is same


def test_the_models_replacement_supersedes_a_fact_of_the_same_kind() -> None:
    old = stored("Alice's favourite band is Muse", "Hobby")
    result = plan([old], Proposal(draft("Alice's favourite band is Radiohead", "Hobby"), old))
    assert [s.old_fact_id for s in result.supersessions] == [old.id]
    assert (result.new_facts, result.reinforcements, result.conflicts) == ([], [], [])


def test_a_replacement_ref_to_a_fact_of_another_kind_is_ignored() -> None:
    old = stored("Alice's email is a@b.ch", "Contact")
    result = plan([old], Proposal(draft("Alice took up rowing", "Hobby"), old))
    assert result.supersessions == [] and len(result.new_facts) == 1


def test_a_replacement_ref_to_another_subjects_fact_is_ignored() -> None:
    annas = stored("Anna works at ACME", "Work", subject=ANNA)
    result = plan([annas], Proposal(draft("Alice works at Globex", "Work"), annas))
    assert result.supersessions == [] and len(result.new_facts) == 1


def test_a_single_valued_slot_supersedes_the_newest_holder() -> None:
    older = stored("Alice lives in Bern", valid_from=NOW.replace(year=2020))
    newer = stored("Alice lives in Zurich")
    result = plan([older, newer], draft("Alice moved to Basel"))
    assert [s.old_fact_id for s in result.supersessions] == [newer.id]


def test_the_same_slot_in_another_subject_is_no_conflict() -> None:
    annas = stored("Anna lives in Bern", subject=ANNA)
    result = plan([annas], draft("Alice lives in Basel"))
    assert result.supersessions == [] and len(result.new_facts) == 1


@pytest.mark.parametrize(
    ("new", "held"),
    [
        (draft("Alice is allergic to cats", "Allergy"), True),
        (draft("Alice works at Globex", "Work", confidence=0.7), True),
        (draft("Alice works at Globex", "Work", confidence=0.8), False),
    ],
)
def test_sensitive_or_unsure_changes_wait_for_the_user(new: FactDraft, held: bool) -> None:
    old = stored("Alice is allergic to dogs" if new.type == "Allergy" else "Alice works at ACME")
    old = old.model_copy(update={"type": new.type})
    result = plan([old], Proposal(new, old))
    assert (len(result.conflicts), len(result.supersessions)) == ((1, 0) if held else (0, 1))
    if held:
        assert result.conflicts[0].conflicting_fact_id == old.id


def test_a_restatement_reinforces_instead_of_adding() -> None:
    old = stored("Alice is vegetarian", confidence=0.8)
    result = plan([old], draft("alice is vegetarian!", confidence=0.8))
    assert [(r.fact_id, r.confidence) for r in result.reinforcements] == [(old.id, 0.96)]
    assert result.new_facts == []


def test_a_near_duplicate_reinforces_and_a_changed_statement_does_not() -> None:
    old = stored("Alice is learning Spanish")
    assert len(plan([old], draft("Alice is currently learning Spanish")).reinforcements) == 1
    assert len(plan([old], draft("Alice is learning piano")).new_facts) == 1


def test_one_old_fact_is_touched_once_per_task() -> None:
    old = stored("Alice lives in Bern")
    result = plan([old], draft("Alice moved to Basel"), draft("Alice moved to Geneva"))
    assert len(result.supersessions) == 1 and len(result.new_facts) == 1


def test_reinforcement_never_reaches_certainty_nor_lowers_confidence() -> None:
    assert reinforced(stored("x", confidence=0.99), draft("x", confidence=0.99)) == 0.99
    assert reinforced(stored("x", confidence=0.9), draft("x", confidence=0.1)) == 0.91


# Labelled pairs the thresholds were calibrated on: a repeat must reinforce, a different
# statement must never (losing a fact is worse than an extra row).
REPEATS = [
    ("Alice is vegetarian", "Alice is a vegetarian"),
    ("Alice is allergic to peanuts", "Alice has a peanut allergy"),
    ("Alice works at ACME", "Alice works for ACME"),
    ("Anna lives in Bern", "Anna lives in Bern, Switzerland"),
    ("Martin plays football on Saturdays", "Martin plays football every Saturday"),
    ("Thomas loves jazz music", "Thomas loves jazz"),
    ("Alice's birthday is on March 3", "Alice has her birthday on March 3"),
    ("Max the dog is afraid of thunder", "Max is afraid of thunderstorms"),
    ("Alice drinks her coffee black", "Alice takes her coffee black"),
    ("Sara is a nurse", "Sara works as a nurse"),
    ("Alice runs a marathon every year", "Alice runs a marathon each year"),
    ("Alice is learning Spanish", "Alice is currently learning Spanish"),
    ("Lisi prefers tea over coffee", "Lisi prefers tea to coffee"),
    ("Alice has two children", "Alice has 2 children"),
]
DIFFERENT = [
    ("Alice lives in Bern", "Alice lives in Basel"),
    ("Alice works at ACME", "Alice works at Globex"),
    ("Alice is allergic to peanuts", "Alice is allergic to shellfish"),
    ("Martin plays football on Saturdays", "Martin plays tennis on Sundays"),
    ("Alice's email is alice@acme.com", "Alice's email is alice@globex.com"),
    ("Thomas loves jazz", "Thomas hates jazz"),
    ("Alice flies to Rome next Friday", "Alice flies to Paris next Friday"),
    ("Alice is vegetarian", "Alice is vegan"),
    ("Anna's son is 8 years old", "Anna's daughter is 8 years old"),
    ("Alice has a dentist appointment on Monday", "Alice has a doctor appointment on Monday"),
    ("Alice likes green tea", "Alice likes black coffee"),
    ("Thomas is Alice's boss", "Thomas is Alice's brother"),
    ("Alice has two children", "Alice has three children"),
    ("Alice is learning Spanish", "Alice is learning piano"),
    ("Alice's phone number is 079 123 45 67", "Alice's phone number is 078 765 43 21"),
]


def reinforces(embedder: Embedder, old_text: str, new_text: str) -> bool:
    old = stored(old_text, embedding_model=embedder.model_name)
    new = draft(new_text).model_copy(
        update={"embedding": embedder.embed([new_text])[0], "embedding_model": embedder.model_name}
    )
    return bool(plan([old], new, embedder=embedder).reinforcements)


def recall(embedder: Embedder) -> tuple[int, int]:
    repeats = sum(reinforces(embedder, a, b) for a, b in REPEATS)
    false = sum(reinforces(embedder, a, b) for a, b in DIFFERENT)
    return repeats, false


@pytest.mark.parametrize(("dimension", "least"), [(64, 6), (768, 7)])
def test_calibration_hash_embedder(dimension: int, least: int) -> None:
    repeats, false = recall(HashEmbedder(dimension))
    assert false == 0 and repeats >= least
    assert duplicate_threshold(f"hash-{dimension}") == 0.82


@pytest.mark.model
def test_calibration_minilm() -> None:
    from shared.adapters.local_embedder import LocalEmbedder

    with override_allow_model_requests(True):
        repeats, false = recall(LocalEmbedder())
    assert false == 0 and repeats >= 12
