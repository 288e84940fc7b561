"""Keyset paging of ``FactStore.list_facts`` (``FactFilter.after``), on both backends: a
user with 10,000 facts pages through all of them, with facts added between pages, and sees
each fact that was there at the first page exactly once."""

from __future__ import annotations

from datetime import timedelta

from shared.models.memory import Fact, FactFilter, FactPosition, Supersession
from tests.contract.conftest import FactBackend
from tests.contract.fact_builders import T0, apply, draft, person

PAGE = 1000
# The in-memory fake checks idempotency keys by a scan (quadratic in bulk), so it pages a
# smaller user; PostgreSQL pages the 10,000 facts.
USER_FACTS = {"real": 10_000, "fake": 2_000}
BATCH = 1000  # facts per extraction (a statement's parameters are bounded)


def page_after(
    backend: FactBackend, user_id: str, last: Fact | None, limit: int = PAGE, **where: object
) -> list[Fact]:
    after = None if last is None else FactPosition(created_at=last.created_at, id=last.id)
    return backend.facts.list_facts(
        user_id, FactFilter.model_validate({**where, "limit": limit, "after": after})
    )


def test_ten_thousand_facts_page_without_gap_or_duplicate_while_facts_are_added(
    fact_backend: FactBackend, user_id: str
) -> None:
    batches = USER_FACTS["fake" if fact_backend.database is None else "real"] // BATCH
    # Every batch at the same instant: ties on created_at are broken by id.
    for batch in range(batches):
        drafts = [draft(f"b{batch}-{n}") for n in range(BATCH)]
        assert apply(fact_backend, user_id, T0, new_facts=drafts)
    seen: list[str] = []
    last: Fact | None = None
    for page in range(40):
        # between pages: new facts, at the same instant as the old ones and later
        later = T0 + timedelta(minutes=page % 2)
        apply(fact_backend, user_id, later, new_facts=[draft(f"new-{page}-{n}") for n in range(3)])
        facts = page_after(fact_backend, user_id, last)
        if not facts:
            break
        assert len(facts) <= PAGE
        seen += [f.id for f in facts]
        last = facts[-1]
    assert len(seen) == len(set(seen)), "a fact was listed twice"
    originals = {f"fact b{batch}-{n}" for batch in range(batches) for n in range(BATCH)}
    listed_texts = {f.text for f in fact_backend.facts.facts_by_id(user_id, seen)}
    assert originals <= listed_texts, f"{len(originals - listed_texts)} facts were skipped"


def test_the_position_pages_within_a_filter_and_the_history(
    fact_backend: FactBackend, user_id: str
) -> None:
    anna = person(user_id, "Anna")
    facts = [draft(f"me{n}") for n in range(5)] + [draft(f"w{n}", type="Work") for n in range(3)]
    apply(fact_backend, user_id, new_persons=[anna], new_facts=facts)
    [old] = [f for f in page_after(fact_backend, user_id, None) if f.text == "fact me0"]
    apply(
        fact_backend,
        user_id,
        T0 + timedelta(seconds=1),
        supersessions=[Supersession(old_fact_id=old.id, replacement=draft("me0b"))],
    )

    def all_pages(**where: object) -> list[str]:
        listed: list[Fact] = []
        while page := page_after(fact_backend, user_id, listed[-1] if listed else None, 2, **where):
            listed += page
        return [f.text for f in listed]

    assert sorted(all_pages(fact_type="Work")) == ["fact w0", "fact w1", "fact w2"]
    assert len(all_pages()) == 8
    assert len(all_pages(include_history=True)) == 9
    assert all_pages(include_history=True)[-1] == "fact me0b"  # the newest sorts last
