"""The dev stack's queued tasks outlive a restart of the Cloud Tasks emulator (``--keep``):
a reminder's delivery task made before ``make down`` still runs at its time after
``make dev``, once, and its name stays reserved as Cloud Tasks keeps it."""

from __future__ import annotations

import signal
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import grpc
import pytest
from google.api_core.exceptions import AlreadyExists
from google.cloud import tasks_v2
from google.cloud.tasks_v2.services.cloud_tasks.transports import CloudTasksGrpcTransport

from scripts.stacklib import tokens
from scripts.stacklib.services import TASKS_PYTHON, tcp_open
from testkit.faults import free_port, wait_until

pytestmark = pytest.mark.stack

QUEUE = "projects/p/locations/here/queues/reminders"


class Received(BaseHTTPRequestHandler):
    server: ReceivingServer

    def do_POST(self) -> None:
        self.server.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *_: object) -> None:
        pass


class ReceivingServer(ThreadingHTTPServer):
    bodies: list[bytes]


@pytest.fixture
def target() -> Iterator[ReceivingServer]:
    server = ReceivingServer(("127.0.0.1", 0), Received)
    server.bodies = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@contextmanager
def emulator(state: Path, keep: Path) -> Iterator[tasks_v2.CloudTasksClient]:
    port = free_port()
    command = [
        str(TASKS_PYTHON), "-W", "ignore::FutureWarning", "-m", "scripts.stacklib.tasks_emulator",
        f"--port={port}", f"--state-dir={state}", f"--queue={QUEUE}", f"--keep={keep}",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        assert wait_until(lambda: tcp_open(port), 30), "the emulator did not start"
        yield tasks_v2.CloudTasksClient(transport=CloudTasksGrpcTransport(channel=channel))
    finally:
        channel.close()
        process.send_signal(signal.SIGTERM)  # as the stack stops it
        process.wait(timeout=30)


def _task(name: str, url: str, due: datetime) -> tasks_v2.Task:
    request = tasks_v2.HttpRequest(url=url, body=name.encode())
    return tasks_v2.Task(name=f"{QUEUE}/tasks/{name}", http_request=request, schedule_time=due)


@pytest.mark.timeout(120)
def test_a_task_made_before_a_restart_runs_after_it_once(
    tmp_path: Path, target: ReceivingServer
) -> None:
    tokens.ensure_keys(tmp_path)
    keep, url = tmp_path / "tasks-kept.json", f"http://127.0.0.1:{target.server_port}/deliver"
    with emulator(tmp_path, keep) as tasks:
        tasks.create_task(parent=QUEUE, task=_task("ran", url, datetime.now(UTC)))
        assert wait_until(lambda: target.bodies == [b"ran"], 20)
        later = datetime.now(UTC) + timedelta(seconds=6)
        tasks.create_task(parent=QUEUE, task=_task("tomorrow", url, later))
    assert target.bodies == [b"ran"]  # the stop came before its time

    with emulator(tmp_path, keep) as tasks:
        assert tasks.get_task(name=f"{QUEUE}/tasks/tomorrow").schedule_time == later
        with pytest.raises(AlreadyExists):  # still reserved: a redelivery cannot double it
            tasks.create_task(parent=QUEUE, task=_task("ran", url, datetime.now(UTC)))
        assert wait_until(lambda: target.bodies == [b"ran", b"tomorrow"], 30)


def test_without_a_kept_file_the_emulator_starts_empty(tmp_path: Path) -> None:
    tokens.ensure_keys(tmp_path)
    with emulator(tmp_path, tmp_path / "none-yet.json") as tasks:
        assert list(tasks.list_tasks(parent=QUEUE)) == []
    assert (tmp_path / "none-yet.json").exists()  # written on stop, empty


@pytest.mark.parametrize("broken", ["{not json", '{"tasks": [{"queue": 1}]}', '["a list"]'])
def test_an_unreadable_kept_file_is_set_aside_and_the_emulator_starts(
    tmp_path: Path, broken: str
) -> None:
    tokens.ensure_keys(tmp_path)
    keep = tmp_path / "tasks-kept.json"
    keep.write_text(broken)
    with emulator(tmp_path, keep) as tasks:
        assert list(tasks.list_tasks(parent=QUEUE)) == []
    assert (tmp_path / "tasks-kept.unreadable").read_text() == broken  # kept for a look
