"""Facts held back for the user's answer as ``/v1/pendingItems``: list (open items, oldest
first, optionally of one chat: ``filter=chat_id = "..."``), get, and ``:resolve``. The
answer itself is the memory service's (``PendingItems``: stored at most once)."""

from __future__ import annotations

from shared.app.settings.needs import SettingsPorts
from shared.app.settings.paged import PENDING, Paging, instant, keyset_page
from shared.app.settings.queries import FilteredPage, parse_filter
from shared.errors import NotFound
from shared.models.memory_api import (
    ListPendingRequest,
    PendingView,
    ResolvePendingRequest,
    ResolveResponse,
)
from shared.models.memory_v1 import PendingAnswer, PendingList
from shared.rest.paging import scope_of
from shared.rest.routes import validated
from shared.services.memory.pending import PendingItems

FILTER_FIELDS = frozenset({"chat_id"})


class PendingAdmin:
    def __init__(self, deps: SettingsPorts) -> None:
        self._deps = deps
        self._items = PendingItems(deps)

    def list(self, user_id: str, query: FilteredPage) -> PendingList:
        terms = parse_filter(query.filter, FILTER_FIELDS)
        chat = validated(ListPendingRequest, terms, "filter").chat_id
        paging = Paging.of(
            self._deps.page_tokens, user_id, scope_of("pendingItems", chat_id=chat), query,
            PENDING, self._deps.clock.now(),
        )  # fmt: skip
        items = self._deps.pending.list_pending(user_id, chat)
        page = keyset_page(items, lambda i: (instant(i.created_at), i.id), paging)
        return PendingList(
            pending_items=self._items.views(user_id, page.items),
            next_page_token=page.next_page_token,
        )

    def get(self, user_id: str, item_id: str) -> PendingView:
        item = self._deps.pending.get_pending(user_id, item_id)
        if item is None:
            raise NotFound("pending item not found")
        [view] = self._items.views(user_id, [item])
        return view

    def resolve(self, user_id: str, item_id: str, answer: PendingAnswer) -> ResolveResponse:
        request = validated(
            ResolvePendingRequest, {"pending_id": item_id, **answer.model_dump()}, "body"
        )
        return self._items.resolve(user_id, request)
