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
from types import TracebackType


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


class PrivateRedis:
    def __init__(self) -> None:
        self.port = free_port()
        self._dir = Path(tempfile.mkdtemp(prefix="redis-fault-"))
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid(self) -> int:
        assert self._process is not None, "not started"
        return self._process.pid

    def start(self) -> PrivateRedis:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed (scripts/bootstrap.sh)")
        self._process = subprocess.Popen(
            [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
             "--appendonly", "no", "--dir", str(self._dir)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        if not wait_until(lambda: redis_answers(self.port), 30):
            self.stop()
            raise RuntimeError("the private redis-server did not start")
        return self

    def pause(self) -> None:
        signal_group(self.pid, signal.SIGSTOP)

    def resume(self) -> None:
        signal_group(self.pid, signal.SIGCONT)

    def stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait(10)
            self._process = None
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> PrivateRedis:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class PrivateFirestore:
    """A Firestore emulator of its own (the stack's JAR) on a free port; ``pause`` and
    ``resume`` by SIGSTOP/SIGCONT keep its data, ``restart`` starts it empty."""

    def __init__(self) -> None:
        self.port = free_port()
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self._process is not None, "not started"
        return self._process.pid

    def start(self) -> PrivateFirestore:
        from scripts.stacklib.services import firestore_command, http_ok

        self._process = subprocess.Popen(
            firestore_command(self.port),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        if not wait_until(lambda: http_ok(self.port), 120):
            self.stop()
            raise RuntimeError("the private Firestore emulator did not start")
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

    def __enter__(self) -> PrivateFirestore:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
