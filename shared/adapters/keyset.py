"""Keyset paging of in-memory lists, as a Firestore query with ``start_after`` pages them:
the fakes' half of the list contracts (tests/contract)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from shared.ports import Keyset

T = TypeVar("T")


def page(
    items: Iterable[T],
    key: Callable[[T], Keyset],
    limit: int,
    after: Keyset | None,
    descending: bool,
) -> list[T]:
    ordered = sorted(items, key=key, reverse=descending)
    if after is not None:
        ordered = [item for item in ordered if (key(item) < after) == descending]
        ordered = [item for item in ordered if key(item) != after]
    return ordered[: max(limit, 0)]
