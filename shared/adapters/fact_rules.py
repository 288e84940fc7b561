"""Rules the in-memory fakes and the PostgreSQL adapters of the fact system share.

Pure functions: what counts as an id, how persons are ordered and merged, how a draft is
checked before it reaches the schema, how recency decays a score, when a fact expires,
which terms index it, how BM25 weighs a term.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TypeVar

from shared.conversation.terms import terms
from shared.conversation.text import fold
from shared.errors import DataRejected
from shared.models.memory import LIFETIME_DAYS, FactDraft, Person

SECONDS_PER_DAY = 86400.0
T = TypeVar("T", str, int)


def is_uuid(value: str | None) -> bool:
    if value is None:
        return False
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def uuids(values: Sequence[str | None]) -> list[str]:
    """The valid uuids among ``values``, lower-cased: anything else can match no row."""
    return [str(uuid.UUID(v)) for v in values if v is not None and is_uuid(v)]


def same_key(a: str, b: str) -> bool:
    """Idempotency keys are stored as keyed hashes of the normalised key."""
    return fold(a) == fold(b)


def check_draft(draft: FactDraft) -> None:
    """What the schema would refuse with an unhelpful error, refused first with a clear one."""
    if not draft.embedding:
        raise DataRejected("an embedding needs at least one dimension")
    if draft.time_anchor is not None and draft.time_anchor.tzinfo is None:
        raise DataRejected("time_anchor needs a time zone")


def sort_persons(persons: list[Person]) -> list[Person]:
    """Names are ciphertext in the database, so both stores order them here."""
    return sorted(persons, key=lambda p: (p.display_name.casefold(), p.display_name, p.id))


def merged_person(keep: Person, absorb: Person) -> Person:
    """``keep`` with ``absorb``'s names as aliases (once each, after normalisation) and
    ``absorb``'s descriptors where ``keep`` has none."""
    seen = {fold(keep.display_name)}
    aliases: list[str] = []
    for name in [*keep.aliases, absorb.display_name, *absorb.aliases]:
        if fold(name) not in seen:
            seen.add(fold(name))
            aliases.append(name)
    descriptors = absorb.descriptors | keep.descriptors
    return keep.model_copy(update={"aliases": aliases, "descriptors": descriptors})


def decay_rate(half_life_days: float) -> float:
    """Per second of age; 0 (no decay) for a non-positive or infinite half-life."""
    if half_life_days <= 0 or math.isinf(half_life_days):
        return 0.0
    return math.log(2) / (half_life_days * SECONDS_PER_DAY)


def candidate_pool(limit: int) -> int:
    """How many index neighbours the scoring re-ranks: decay and boost reorder them."""
    return max(4 * limit, 40)


def expiry(durability: str, seen: datetime, anchor: datetime | None) -> datetime | None:
    """When a fact leaves retrieval: its lifetime after it was last seen, or after the moment
    it is about when that is later ("the dentist on June 5" lives until June 12). Durable
    facts never expire."""
    days = LIFETIME_DAYS.get(durability)
    if days is None:
        return None
    return max(seen, anchor or seen) + timedelta(days=days)


def expires_sql(row: str = "") -> str:
    """``expiry`` in SQL over the columns of ``row`` (an alias and a dot, or nothing), the
    moment seen given twice as parameters: for statements that recompute it in place."""
    cases = " ".join(f"WHEN '{name}' THEN {days}" for name, days in LIFETIME_DAYS.items())
    return (
        f"greatest(%s::timestamptz, coalesce({row}time_anchor, %s::timestamptz))"
        f" + make_interval(days => CASE {row}durability {cases} END)"
    )


def fact_terms(text: str, marker: str | None = None) -> list[str]:
    """What the keyword channel indexes of a fact: its text and its time words."""
    return terms(f"{text} {marker}" if marker else text)


# BM25 (Robertson/Sparck Jones idf, the +1 keeps it positive) with the usual constants.
BM25_K1 = 1.2
BM25_B = 0.75


# Facts the keyword channel reads before it scores them (scoring costs ~9 us a fact).
# Measured by bench.retrieval at 100,000 synthetic facts (the channel's recall@10 against
# exact BM25 over every fact; its transaction's p95): the former rule (add terms while
# fewer than 100 facts were read, however many the last term adds: 2,400 read at p95)
# 0.84-0.85 and 22.7 ms; this one (660 read at p95) 0.82-0.87 and 12-13 ms. The recall
# moves between runs: equally rare terms are taken in the order of their keyed hashes.
FETCH_BUDGET = 700


def fetching_terms(docs: dict[T, int], total: int) -> set[T]:
    """The query terms that fetch candidates: the rarest first, while the facts they fetch
    stay within ``FETCH_BUDGET`` (the rarest always), and none in more than a twentieth of
    the user's facts. The others only score what was fetched: their idf is low, and reading
    every fact that says "work" would cost more than it finds. ``postgres_fact_recall``
    selects the same terms in SQL."""
    chosen: set[T] = set()
    running = 0
    for term, count in sorted(docs.items(), key=lambda item: (item[1], item[0])):
        if count > max(50, total // 20) or (chosen and running + count > FETCH_BUDGET):
            break
        chosen.add(term)
        running += count
    return chosen


def bm25_idf(docs: int, total: int) -> float:
    return math.log(1.0 + (total - docs + 0.5) / (docs + 0.5))


def bm25_term(idf: float, tf: int, length: int, average: float) -> float:
    norm = 1.0 - BM25_B + BM25_B * (length / average if average > 0 else 1.0)
    return idf * tf * (BM25_K1 + 1.0) / (tf + BM25_K1 * norm)
