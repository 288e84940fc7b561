"""An instance connects its stores while it starts (``Deps.connect``, called by the turn
function's warm-up): against the real test stack every store answers and its connection is
then reused; a store that is down is named and left to connect on first use, and the
instance still starts."""

from __future__ import annotations

import pytest

from shared.config import Settings
from shared.deps import TURN_PORTS, Deps
from testkit.faults import free_port

pytestmark = pytest.mark.usefixtures("stack_env")


def test_every_store_is_connected_before_the_first_turn() -> None:
    deps = Deps(Settings())
    assert deps.connect() == []
    database = deps._database
    assert len(database._idle) == 2  # both PostgreSQL connections wait for the first recall
    assert deps._redis.connection_pool._available_connections  # Redis's stays open too
    assert set(TURN_PORTS) <= set(deps.__dict__)  # the turn's ports are built
    deps.close()


def test_the_firestore_warm_up_writes_nothing() -> None:
    """Its transaction reads a document that does not exist and commits no write."""
    deps = Deps(Settings())
    assert deps.connect() == []
    assert not deps._firestore.collection("warmup").document("-").get().exists
    assert list(deps._firestore.collection("warmup").limit(1).stream()) == []
    deps.close()


def test_a_store_that_is_down_is_named_and_the_rest_still_connect() -> None:
    down = Settings(redis_url=f"redis://127.0.0.1:{free_port()}/0", redis_timeout_seconds=0.3)
    deps = Deps(down)
    assert deps.connect() == ["redis"]
    assert len(deps._database._idle) == 2
    deps.close()


def test_a_store_skipped_is_not_tried() -> None:
    """A forked worker skips what did not answer in the master (``warm_up_worker``)."""
    down = Settings(redis_url=f"redis://127.0.0.1:{free_port()}/0", redis_timeout_seconds=0.3)
    deps = Deps(down)
    assert deps.connect(skip=["redis"]) == []
    assert deps._redis.connection_pool._created_connections == 0  # not even tried
    assert len(deps._database._idle) == 2
    deps.close()
