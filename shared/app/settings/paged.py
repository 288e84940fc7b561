"""Pages of the memory function's lists (AIP-158) and what a list request may say.

Facts are paged by the fact store (``FactFilter.after``). The other lists are short (a
user's persons, open pending items, strategies, a fact's versions): their stores answer
them whole, and ``keyset_page`` cuts the page after the token's position in a stable order,
so an item added between pages is neither skipped nor repeated either. A token names a
position, never an offset, and is bound to the user and the list's scope.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Generic, TypeVar

from shared.rest.paging import PageQuery, PageTokens, Position

T = TypeVar("T")
Key = tuple[str, ...]


@dataclass(frozen=True)
class Limits:
    default: int
    maximum: int


FACTS = Limits(default=100, maximum=1000)
VERSIONS = Limits(default=100, maximum=1000)
PERSONS = Limits(default=100, maximum=500)
PENDING = Limits(default=50, maximum=200)
STRATEGIES = Limits(default=50, maximum=200)


@dataclass(frozen=True)
class Paging:
    """One list request's paging: the user, the list's scope, its size and its position."""

    tokens: PageTokens
    user_id: str
    scope: str
    size: int
    position: Position | None
    now: datetime

    @classmethod
    def of(
        cls,
        tokens: PageTokens,
        user_id: str,
        scope: str,
        page: PageQuery,
        limits: Limits,
        now: datetime,
    ) -> Paging:
        position = tokens.read(page.page_token, user_id, scope, now) if page.page_token else None
        size = page.size(limits.default, limits.maximum)
        return cls(tokens, user_id, scope, size, position, now)

    def next_token(self, last_position: Sequence[object] | None) -> str:
        """The token of the page after the one ending at ``last_position``; "" when none."""
        if last_position is None:
            return ""
        return self.tokens.issue(self.user_id, self.scope, last_position, self.now)


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next_page_token: str


def keyset_page(
    items: Sequence[T], key: Callable[[T], Key], paging: Paging, newest_first: bool = False
) -> Page[T]:
    """The page after ``paging``'s position of ``items`` ordered by ``key`` (unique)."""
    ordered = sorted(items, key=key, reverse=newest_first)
    if paging.position is not None:
        after = tuple(str(part) for part in paging.position)
        ordered = [i for i in ordered if (key(i) < after if newest_first else key(i) > after)]
    page = ordered[: paging.size]
    more = len(ordered) > paging.size
    return Page(page, paging.next_token(list(key(page[-1])) if more else None))


def instant(moment: datetime | None) -> str:
    """A sortable text of an instant (UTC, fixed width); "" for none, which sorts first."""
    return "" if moment is None else moment.astimezone(UTC).isoformat(timespec="microseconds")
