"""What the assistant has learned about how to do things for the user (``/v1/strategies``),
and forgetting it.

The list shows each strategy (a plan and its runs: what it was used for, how it went, the
feedback against it, what failed), most recently run first; a DELETE forgets one strategy
with its runs and feedback (404 if the user has none of that id, another user's looks the
same); ``:forgetAll`` forgets them all. Strategies are derived from runs, never edited, so
they carry no etag. Both deletions repeat harmlessly: a second DELETE answers 404, a second
``:forgetAll`` forgets 0. Nothing cached holds strategies: the next plan already sees it.
"""

from __future__ import annotations

from shared.app.settings.needs import SettingsPorts
from shared.app.settings.paged import STRATEGIES, Paging, instant, keyset_page
from shared.errors import NotFound
from shared.models.history_api import ForgottenResponse, StrategyRef
from shared.models.memory_v1 import StrategyList
from shared.rest.paging import PageQuery, scope_of
from shared.rest.routes import validated
from shared.services.history.strategies import strategy_views

MAX_LISTED_RUNS = 1000


class StrategyAdmin:
    def __init__(self, deps: SettingsPorts) -> None:
        self._deps = deps

    def list(self, user_id: str, query: PageQuery) -> StrategyList:
        now = self._deps.clock.now()
        paging = Paging.of(
            self._deps.page_tokens, user_id, scope_of("strategies"), query, STRATEGIES, now
        )
        runs = self._deps.executions.list_executions(user_id, now, MAX_LISTED_RUNS)
        page = keyset_page(
            strategy_views(runs),
            lambda s: (instant(s.last_run_at), s.strategy_id),
            paging,
            newest_first=True,
        )
        return StrategyList(strategies=page.items, next_page_token=page.next_page_token)

    def forget(self, user_id: str, strategy_id: str) -> ForgottenResponse:
        ref = validated(StrategyRef, {"strategy_id": strategy_id}, "strategy")
        forgotten = self._deps.executions.forget_strategy(user_id, ref.strategy_id)
        if not forgotten:
            raise NotFound("strategy not found")
        return ForgottenResponse(forgotten=forgotten)

    def forget_all(self, user_id: str) -> ForgottenResponse:
        return ForgottenResponse(forgotten=self._deps.executions.forget_all(user_id))
