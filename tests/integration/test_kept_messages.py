"""The dev stack's unacknowledged Pub/Sub messages outlive a restart of the emulator: the push
relay (``--keep``) keeps what its pushes have not settled, and publishes it again at the
next start, with its attributes and ordering key (scripts/stacklib/kept_messages.py). Real
emulators (private ones) and the relay's own process; a stand-in answers for the function."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from google.cloud import pubsub_v1

from scripts.stacklib import kept_messages, tokens
from scripts.stacklib.profile import AGENTS_INVOKER_EMAIL, AGENTS_TOPIC, PROJECT
from scripts.stacklib.pubsub_setup import create_topology, kept_subscriptions
from scripts.stacklib.services import http_ok, pubsub_command
from testkit.faults import free_port, wait_until

pytestmark = pytest.mark.stack

TOPIC = f"projects/{PROJECT}/topics/{AGENTS_TOPIC}"


class Pushed(BaseHTTPRequestHandler):
    server: Function

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["message"]
        self.server.received.append(message)
        self.send_response(self.server.status_for(message["attributes"]["marker"]))
        self.end_headers()

    def log_message(self, *_: object) -> None:
        pass


class Function(ThreadingHTTPServer):
    """Stands in for the agents function: answers each push by its ``marker`` attribute."""

    received: list[dict[str, object]]
    status_for: Callable[[str], int]

    def markers(self) -> list[str]:
        return [str(m["attributes"]["marker"]) for m in self.received]  # type: ignore[index]


@pytest.fixture
def function() -> Iterator[Function]:
    server = Function(("127.0.0.1", 0), Pushed)
    server.received, server.status_for = [], lambda _: 200
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@contextmanager
def stack(
    tmp_path: Path, function: Function, monkeypatch: pytest.MonkeyPatch, watch: str = ""
) -> Iterator[None]:
    """A Pub/Sub emulator (empty, as after a restart) and a relay keeping into tmp_path;
    ``watch``: a pull subscription of the topic made first, to read what gets published."""
    pubsub, relay_port = free_port(), free_port()
    monkeypatch.setenv("PUBSUB_EMULATOR_HOST", f"127.0.0.1:{pubsub}")
    emulator = subprocess.Popen(
        pubsub_command(pubsub), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    relay = None
    try:
        assert wait_until(lambda: http_ok(pubsub), 60), "the emulator did not start"
        command = [
            sys.executable, "-m", "scripts.stacklib.push_relay", f"--port={relay_port}",
            f"--target=http://127.0.0.1:{function.server_port}/", f"--email={AGENTS_INVOKER_EMAIL}",
            f"--state-dir={tmp_path}", f"--keep={tmp_path / 'kept.json'}",
            f"--pubsub=127.0.0.1:{pubsub}", f"--kept-subscription={kept_subscriptions()[0]}",
        ]  # fmt: skip
        with open(tmp_path / "relay.log", "ab") as log:
            relay = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        assert wait_until(lambda: http_ok(relay_port, "/healthz"), 30), "the relay did not start"
        if watch:
            pubsub_v1.PublisherClient().create_topic(name=TOPIC)
            pubsub_v1.SubscriberClient().create_subscription(name=watch, topic=TOPIC)
        endpoint = f"http://127.0.0.1:{relay_port}/{TOPIC}"
        create_topology(f"127.0.0.1:{pubsub}", endpoint, keep=True)  # after the relay, as `up`
        yield
    finally:
        if relay is not None:
            relay.send_signal(signal.SIGTERM)  # as the stack stops it
            relay.wait(timeout=30)
        emulator.terminate()
        emulator.wait(timeout=30)


def kept(tmp_path: Path) -> list[kept_messages.Message]:
    return kept_messages.load(str(tmp_path / "kept.json"))


def publish(marker: str, data: bytes, ordering_key: str = "") -> str:
    publisher = kept_messages.emulator_publisher(os.environ["PUBSUB_EMULATOR_HOST"])
    try:
        message = {"data": data, "attributes": {"marker": marker}, "ordering_key": ordering_key}
        response = publisher.publish(request={"topic": TOPIC, "messages": [message]})
        return str(response.message_ids[0])
    finally:
        publisher.transport.close()


@pytest.mark.timeout(180)
def test_a_message_not_yet_acknowledged_is_published_again_after_a_restart(
    tmp_path: Path, function: Function, monkeypatch: pytest.MonkeyPatch
) -> None:
    tokens.ensure_keys(tmp_path)
    function.status_for = lambda marker: 200 if marker == "done" else 503  # still failing
    with stack(tmp_path, function, monkeypatch):
        publish("done", b"job-1")
        first_id = publish("later", b"job-2", ordering_key="user-1")
        assert wait_until(lambda: {"done", "later"} <= set(function.markers()), 20)
        # Kept while the stack runs, not only at its stop: only the one not acknowledged.
        assert wait_until(lambda: [m.message_id for m in kept(tmp_path)] == [first_id], 10)
    (later,) = kept(tmp_path)
    assert (later.topic, later.data, later.ordering_key) == (TOPIC, b"job-2", "user-1")
    assert later.attributes == {"marker": "later"}

    function.status_for = lambda _: 200
    pushes = len(function.received)
    with stack(tmp_path, function, monkeypatch):
        assert wait_until(lambda: len(function.received) > pushes and kept(tmp_path) == [], 30)
    (again,) = function.received[pushes:]  # the acknowledged one is not pushed again
    assert again["attributes"] == {"marker": "later"}
    assert base64.b64decode(str(again["data"])) == b"job-2"
    # A new message (the handler's ids make it the same job): its own publish time.
    assert kept_messages.instant(str(again["publishTime"])) != later.publish_time


@pytest.mark.timeout(120)
def test_a_message_the_subscription_gave_up_on_is_not_kept(
    tmp_path: Path, function: Function, monkeypatch: pytest.MonkeyPatch
) -> None:
    tokens.ensure_keys(tmp_path)
    function.status_for = lambda _: 500  # a poison job: dead-lettered after 5 attempts
    with stack(tmp_path, function, monkeypatch):
        publish("poison", b"{}")
        assert wait_until(lambda: len(kept(tmp_path)) == 1, 10)
        assert wait_until(lambda: function.markers().count("poison") == 5, 60)
        assert wait_until(lambda: kept(tmp_path) == [], 5)
    assert kept(tmp_path) == []


def test_the_ordering_key_is_published_again(
    tmp_path: Path, function: Function, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The emulator's push body carries no ordering key: a pull subscription shows it."""
    tokens.ensure_keys(tmp_path)
    message = kept_messages.Message(TOPIC, "41", b"job-3", {"marker": "k"}, "user-2", "")
    kept_messages.save(str(tmp_path / "kept.json"), [message])
    watch = f"projects/{PROJECT}/subscriptions/watch"
    with stack(tmp_path, function, monkeypatch, watch):
        assert wait_until(lambda: function.markers() == ["k"], 20)
        subscriber = pubsub_v1.SubscriberClient()
        try:
            response = subscriber.pull(subscription=watch, max_messages=5, timeout=10)
        finally:
            subscriber.close()
    (copy,) = [received.message for received in response.received_messages]
    assert (copy.data, dict(copy.attributes), copy.ordering_key) == (
        b"job-3",
        {"marker": "k"},
        "user-2",
    )
