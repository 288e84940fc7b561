"""The model service as a child process on a free port, for tests and benchmarks.

``scripts/stack`` runs the stack's own instance; this starts another one with its own token
and options (tighter limits, another GGUF file) and stops it afterwards.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from scripts.model_service.llama import MODEL_NAME
from shared.config import Settings

ROOT = Path(__file__).resolve().parents[2]
EMBEDDING_MODEL = "all-MiniLM-L6-v2"
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@dataclass(frozen=True)
class Child:
    url: str
    token: str
    model: str
    pid: int

    def settings(self) -> dict[str, Any]:
        """``Settings`` keywords that point the ``vertex`` adapters at this instance."""
        return {
            "model_provider": "vertex",
            "vertex_base_url": self.url,
            "vertex_access_token": self.token,
            **Settings.one_model(self.model),
            "vertex_embedding_model": EMBEDDING_MODEL,
            "embedding_dimension": 384,
        }

    def health(self) -> dict[str, Any]:
        return service_health(self.url)


def service_health(url: str) -> dict[str, Any]:
    """A running service's ``/healthz``: its models, limits, lanes and finish counts."""
    with _OPENER.open(f"{url.rstrip('/')}/healthz", timeout=5) as response:
        health: dict[str, Any] = json.load(response)
        return health


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def child_service(
    *options: str, model: str = MODEL_NAME, log: IO[bytes] | None = None, start_timeout: float = 90
) -> Iterator[Child]:
    """Start ``python -m scripts.model_service`` with ``options``; yield once it is healthy."""
    with tempfile.TemporaryDirectory() as scratch:
        token = secrets.token_urlsafe(24)
        token_file = Path(scratch) / "token"
        token_file.write_text(token)
        token_file.chmod(0o600)
        port = _free_port()
        command = [
            sys.executable, "-m", "scripts.model_service", "--port", str(port),
            "--token-file", str(token_file), "--model-name", model, *options,
        ]  # fmt: skip
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
            stdout=log or subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        try:
            child = Child(f"http://127.0.0.1:{port}", token, model, process.pid)
            _wait_healthy(child, process, start_timeout)
            yield child
        finally:
            process.terminate()
            process.wait(15)


def _wait_healthy(child: Child, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the model service exited with {process.returncode}")
        try:
            child.health()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"the model service was not healthy within {timeout:.0f} s")
