"""Rules the in-memory fakes and the PostgreSQL adapters of the fact system share.

Pure functions: what counts as an id, how persons are ordered and merged, how a draft is
checked before it reaches the schema, how recency decays a score.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence

from shared.conversation.text import fold
from shared.errors import DataRejected
from shared.models.memory import FactDraft, Person

SECONDS_PER_DAY = 86400.0


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
