"""An instance connects its stores while it starts (``Deps.connect``, called by the turn
function's warm-up): against the real test stack every store answers and its connection is
then reused; a store that is down is named and left to connect on first use, and the
instance still starts."""

from __future__ import annotations

import pytest

from shared.config import Settings
from shared.deps import Deps
from testkit.faults import free_port

pytestmark = pytest.mark.usefixtures("stack_env")


def test_every_store_is_connected_before_the_first_turn() -> None:
    deps = Deps(Settings())
    assert deps.connect() == []
    database = deps._database
    assert len(database._idle) == 2  # both PostgreSQL connections wait for the first recall
    assert deps._redis.connection_pool._available_connections  # Redis's stays open too
    deps.close()


def test_a_store_that_is_down_is_named_and_the_rest_still_connect() -> None:
    down = Settings(redis_url=f"redis://127.0.0.1:{free_port()}/0", redis_timeout_seconds=0.3)
    deps = Deps(down)
    assert deps.connect() == ["redis"]
    assert len(deps._database._idle) == 2
    deps.close()
