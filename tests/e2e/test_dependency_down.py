"""A dependency that is down gives 503 ``dependency_unavailable`` and half-writes nothing."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from google.cloud import firestore

from scripts import serve
from tests.e2e.conftest import Served, wait_for
from tests.e2e.snapshots import firestore_paths

pytestmark = [pytest.mark.e2e, pytest.mark.stack]
ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def turn_without_redis(served: Served) -> Iterator[str]:
    """A second turn function whose Redis address answers nothing."""
    port = free_port()
    env = {
        **os.environ,
        **serve.read_env("test"),
        "PYTHONPATH": str(ROOT),
        "REDIS_URL": f"redis://127.0.0.1:{free_port()}/0",
        "MODEL_PROVIDER": "vertex",
        "VERTEX_BASE_URL": served.model.base_url,
        "VERTEX_ACCESS_TOKEN": served.model.token,
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "functions_framework",
            "--target",
            "turn",
            "--source",
            str(ROOT / "functions/turn/main.py"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/"

    def answering() -> bool:
        try:
            return httpx.get(url, timeout=1).status_code == 405
        except httpx.TransportError:
            return False

    try:
        wait_for(answering)
        yield url
    finally:
        process.terminate()
        process.wait(10)


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
