"""Faults by pid, for the fault-injection tests and benchmarks: pause, resume or kill a
process the test started (never a process found by name), and private instances of a
service, so a fault never reaches the shared stack's other users.

``PrivateRedis`` runs its own ``redis-server`` on a free loopback port; ``pause`` stops it
with SIGSTOP (connections are accepted by the kernel and then hang, as with an unresponsive
server), ``resume`` continues it with the data it held.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Self


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(check: Callable[[], bool], seconds: float, interval: float = 0.05) -> bool:
    """Poll ``check`` (exceptions count as not yet) until it holds or ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return True
        except Exception:  # a service that is starting may fail its probe in any way
            pass
        time.sleep(interval)
    return False


def signal_group(pid: int, sig: signal.Signals) -> None:
    """``sig`` to the process group ``pid`` leads (processes started with a new session)."""
    os.killpg(pid, sig)


def redis_answers(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
        sock.settimeout(0.5)
        sock.sendall(b"PING\r\n")
        return sock.recv(16).startswith(b"+PONG")


class PrivateService:
    """A service process of its own on a free loopback port, in its own process group:
    ``pause`` (SIGSTOP: connections hang, as with an unresponsive server) and ``resume``
    keep its state; ``restart`` starts it anew."""

    name = "service"
    start_seconds = 30.0

    def __init__(self) -> None:
        self.port = free_port()
        self._process: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        raise NotImplementedError

    def answers(self) -> bool:
        raise NotImplementedError

    @property
    def pid(self) -> int:
        assert self._process is not None, "not started"
        return self._process.pid

    def start(self) -> Self:
        self._process = subprocess.Popen(
            self.command(),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        if not wait_until(self.answers, self.start_seconds):
            self.stop()
            raise RuntimeError(f"the private {self.name} did not start")
        return self

    def pause(self) -> None:
        signal_group(self.pid, signal.SIGSTOP)

    def resume(self) -> None:
        signal_group(self.pid, signal.SIGCONT)

    def restart(self) -> None:
        self.stop()
        self.start()

    def stop(self) -> None:
        if self._process is not None:
            with contextlib.suppress(ProcessLookupError):
                signal_group(self._process.pid, signal.SIGKILL)
            self._process.wait(30)
            self._process = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class PrivateRedis(PrivateService):
    name = "redis-server"

    def __init__(self) -> None:
        super().__init__()
        self._dir = Path(tempfile.mkdtemp(prefix="redis-fault-"))

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def command(self) -> list[str]:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed (scripts/bootstrap.sh)")
        return [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
                "--appendonly", "no", "--dir", str(self._dir)]  # fmt: skip

    def answers(self) -> bool:
        return redis_answers(self.port)

    def stop(self) -> None:
        super().stop()
        shutil.rmtree(self._dir, ignore_errors=True)


class PrivateFirestore(PrivateService):
    """The stack's Firestore emulator JAR; a restart starts it empty."""

    name, start_seconds = "Firestore emulator", 120.0

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        from scripts.stacklib.services import firestore_command

        return firestore_command(self.port)

    def answers(self) -> bool:
        from scripts.stacklib.services import http_ok

        return http_ok(self.port)
