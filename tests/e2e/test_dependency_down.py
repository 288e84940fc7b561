"""A dependency that is down gives 503 ``dependency_unavailable`` and half-writes nothing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest
from google.cloud import firestore

from tests.e2e.conftest import Served, function_without_redis
from tests.e2e.snapshots import firestore_paths

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


@pytest.fixture
def turn_without_redis(served: Served) -> Iterator[str]:
    with function_without_redis(served, "turn") as url:
        yield url + "/"


def test_redis_down_is_503_and_nothing_is_written(
    served: Served, turn_without_redis: str, db: firestore.Client
) -> None:
    user = f"u{uuid.uuid4().hex[:12]}"
    response = httpx.post(
        turn_without_redis,
        json={"message": "Hello", "client_message_id": "d1"},
        headers={"Authorization": f"Bearer {served.token(user)}"},
        timeout=60,
    )
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "dependency_unavailable"
    assert firestore_paths(db, user) == {}
