"""What the assistant has learned about how to do things for the user, and forgetting it.

``list`` shows each strategy (a plan and its runs: what it was used for, how it went, the
feedback against it, what failed); ``forget`` deletes one strategy with its runs and
feedback (404 if the user has none of that id, another user's looks the same); ``forget_all``
deletes them all. Both repeat harmlessly: a second ``forget`` answers 404, a second
``forget_all`` forgets 0. Nothing cached holds strategies: the next plan already sees it.
"""

from __future__ import annotations

from shared.app.settings.ports import SettingsPorts
from shared.errors import NotFound
from shared.models.history_api import (
    ForgetAllRequest,
    ForgottenResponse,
    StrategiesResponse,
    StrategyRef,
)
from shared.services.history.strategies import strategy_views

MAX_LISTED_RUNS = 1000


class StrategyAdmin:
    def __init__(self, deps: SettingsPorts) -> None:
        self._deps = deps

    def list(self, user_id: str) -> StrategiesResponse:
        runs = self._deps.executions.list_executions(
            user_id, self._deps.clock.now(), MAX_LISTED_RUNS
        )
        return StrategiesResponse(strategies=strategy_views(runs))

    def forget(self, user_id: str, request: StrategyRef) -> ForgottenResponse:
        forgotten = self._deps.executions.forget_strategy(user_id, request.strategy_id)
        if not forgotten:
            raise NotFound("strategy not found")
        return ForgottenResponse(forgotten=forgotten)

    def forget_all(self, user_id: str, request: ForgetAllRequest) -> ForgottenResponse:
        return ForgottenResponse(forgotten=self._deps.executions.forget_all(user_id))
