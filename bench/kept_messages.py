"""How much a killed dev stack loses of its Pub/Sub messages, and how soon a restart pushes
the kept ones again (scripts/stacklib/kept_messages.py).

A private Pub/Sub emulator and the push relay's own process with ``--keep``, in front of a
stand-in for the agents function that holds every push unanswered (as a job still running
at ``make down``), so every message stays unacknowledged.
Printed: for each message published one at a time, the time from its publish call's answer
to the relay's file holding it (a SIGKILL within it loses the message), p50, p95 and max;
then, with those messages kept, a fresh emulator and relay: the time from the relay's start
to every kept message pushed again.

    .venv/bin/python -m bench.kept_messages [--messages 50]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from bench.turn_report import pct
from scripts.stacklib import kept_messages, tokens
from scripts.stacklib.profile import AGENTS_INVOKER_EMAIL, AGENTS_TOPIC, PROJECT
from scripts.stacklib.pubsub_setup import create_topology, kept_subscriptions
from scripts.stacklib.services import http_ok, pubsub_command
from testkit.faults import free_port, wait_until

TOPIC = f"projects/{PROJECT}/topics/{AGENTS_TOPIC}"


class Hold(BaseHTTPRequestHandler):
    server: Target

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.server.pushes += 1
        self.server.released.wait()
        self.send_response(503)
        self.end_headers()

    def log_message(self, *_: object) -> None:
        pass


class Target(ThreadingHTTPServer):
    daemon_threads = True
    pushes = 0
    released = threading.Event()


@contextmanager
def stack(state: Path, target: Target) -> Iterator[tuple[Path, float]]:
    """An empty emulator and a keeping relay: (the kept file, when the relay was started)."""
    pubsub, relay_port, keep = free_port(), free_port(), state / "kept.json"
    os.environ["PUBSUB_EMULATOR_HOST"] = f"127.0.0.1:{pubsub}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    emulator = subprocess.Popen(pubsub_command(pubsub), **quiet)  # type: ignore[call-overload]
    assert wait_until(lambda: http_ok(pubsub), 60), "the emulator did not start"
    command = [
        sys.executable, "-m", "scripts.stacklib.push_relay", f"--port={relay_port}",
        f"--target=http://127.0.0.1:{target.server_port}/", f"--email={AGENTS_INVOKER_EMAIL}",
        f"--state-dir={state}", f"--keep={keep}", f"--pubsub=127.0.0.1:{pubsub}",
        f"--kept-subscription={kept_subscriptions()[0]}",
    ]  # fmt: skip
    started = time.monotonic()
    relay = subprocess.Popen(command, **quiet)  # type: ignore[call-overload]
    try:
        assert wait_until(lambda: http_ok(relay_port, "/healthz"), 30), "no relay"
        create_topology(f"127.0.0.1:{pubsub}", f"http://127.0.0.1:{relay_port}/{TOPIC}", True)
        yield keep, started
    finally:
        relay.send_signal(signal.SIGTERM)
        relay.wait(timeout=30)
        emulator.terminate()
        emulator.wait(timeout=30)


def kept_ids(keep: Path) -> set[kept_messages.Key]:
    return {m.key for m in kept_messages.load(str(keep))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=50)
    args = parser.parse_args()
    target = Target(("127.0.0.1", 0), Hold)
    threading.Thread(target=target.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as folder:
        state = Path(folder)
        tokens.ensure_keys(state)
        windows = []
        with stack(state, target) as (keep, _):
            publisher = kept_messages.emulator_publisher(os.environ["PUBSUB_EMULATOR_HOST"])
            for n in range(args.messages):
                message = {"data": b"{}", "attributes": {"n": str(n)}}
                reply = publisher.publish(request={"topic": TOPIC, "messages": [message]})
                published, sent = time.monotonic(), reply.message_ids[0]
                assert wait_until(lambda m=sent: m in {k[1] for k in kept_ids(keep)}, 10, 0.005)
                windows.append(time.monotonic() - published)
            publisher.transport.close()
        print(f"publish -> kept file ({args.messages} messages, one at a time): ", end="")
        print(
            f"p50 {pct(windows, 50):.3f} s, p95 {pct(windows, 95):.3f} s, max {max(windows):.3f} s"
        )

        old = kept_ids(state / "kept.json")
        with stack(state, target) as (keep, started):
            assert len(old) == args.messages, f"{len(old)} kept of {args.messages}"
            before = target.pushes
            assert wait_until(lambda: target.pushes > before, 60, 0.005)
            first = time.monotonic() - started
            assert wait_until(lambda: not kept_ids(keep) & old, 60, 0.005)
            assert wait_until(lambda: len(kept_ids(keep)) == args.messages, 10, 0.005)
            again = time.monotonic() - started
        print(
            f"restart with {args.messages} kept: relay start -> first pushed again {first:.2f} s,"
            f" all published again and kept as new messages {again:.2f} s"
        )
    target.released.set()
    target.shutdown()


if __name__ == "__main__":
    main()
