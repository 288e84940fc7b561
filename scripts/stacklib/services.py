"""The stack's long-running services: how each starts, stops and shows it is healthy."""

from __future__ import annotations

import functools
import os
import shutil
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import firestore_data, postgres, pubsub_setup, tokens
from .profile import AGENTS_INVOKER_EMAIL, HOST, LOCAL_MODEL, ROOT, Profile

TASKS_PYTHON = ROOT / ".tools" / "tasks-venv" / "bin" / "python"
# Measured: each emulator idles at ~100 MB RSS; Firestore holding 4,000 2 KB documents at
# ~165 MB. C1-only JIT and the serial GC start in <1 s and stay small on 2 cores.
JVM_OPTS = ["-Xms16m", "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
# Firestore keeps every document in its heap: a 10-minute soak of 64 users (about 2,600
# turns, their checkpoints) filled 192 MB, and the emulator then spent its time collecting
# garbage (p95 60 s, 503s). The heap grows only as far as the data needs.
FIRESTORE_JVM_OPTS = [*JVM_OPTS[:1], "-Xmx1g", *JVM_OPTS[2:]]
KEPT_MESSAGES = "pubsub-kept.json"  # the push relay's (kept_messages)
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@dataclass
class Service:
    name: str
    port: int
    command: list[str]
    healthy: Callable[[], bool]
    stop_signal: signal.Signals = signal.SIGTERM
    user: str | None = None
    prepare: Callable[[], None] = field(default=lambda: None)
    env: dict[str, str] = field(default_factory=dict)  # added to the stack's environment

    def environment(self) -> dict[str, str] | None:
        return {**os.environ, **self.env} if self.env else None


def http_ok(port: int, path: str = "/") -> bool:
    with _OPENER.open(f"http://{HOST}:{port}{path}", timeout=1) as response:
        return bool(response.status == 200)


def tcp_open(port: int) -> bool:
    with socket.create_connection((HOST, port), timeout=1):
        return True


def redis_ping(port: int) -> bool:
    with socket.create_connection((HOST, port), timeout=1) as sock:
        sock.sendall(b"PING\r\n")
        return sock.recv(16).startswith(b"+PONG")


def port_free(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
        return True


@functools.cache
def gcloud_sdk_root() -> Path:
    gcloud = shutil.which("gcloud")
    if gcloud is None:
        raise SystemExit("gcloud (google-cloud-cli with its emulators) is not installed")
    root = Path(gcloud).resolve().parent.parent  # <sdk>/bin/gcloud
    if not (root / "platform").is_dir():
        out = subprocess.run(
            [gcloud, "info", "--format=value(installation.sdk_root)"],
            capture_output=True,
            text=True,
            check=True,
        )
        root = Path(out.stdout.strip())
    return root


def _emulator_jar(folder: str, pattern: str) -> Path:
    jars = sorted((gcloud_sdk_root() / "platform" / folder).glob(pattern))
    if not jars:
        raise SystemExit(f"no {folder} jar under {gcloud_sdk_root()}/platform: install it")
    return jars[-1]


def _java() -> str:
    java = shutil.which("java")
    if java is None:
        raise SystemExit("java is not installed (the emulators need a JRE 11+)")
    return java


def firestore_command(port: int, import_data: Path | None = None) -> list[str]:
    """The Firestore emulator's JAR on ``port`` (also how tests start a private one),
    starting with the documents of an export (``firestore_data``) when given one."""
    # -Duser.language: the emulator's own launcher sets it (English-only messages).
    return [
        _java(), *FIRESTORE_JVM_OPTS, "-Duser.language=en",
        "-cp", str(_emulator_jar("cloud-firestore-emulator", "*.jar")),
        "com.google.cloud.datastore.emulator.firestore.CloudFirestore",
        "start", f"--host={HOST}", f"--port={port}",
        *([f"--import-data={import_data}"] if import_data else []),
    ]  # fmt: skip


def pubsub_command(port: int) -> list[str]:
    """The Pub/Sub emulator's JAR on ``port`` (also how tests start a private one)."""
    jar = _emulator_jar("pubsub-emulator", "lib/*.jar")
    return [_java(), *JVM_OPTS, "-jar", str(jar), f"--host={HOST}", f"--port={port}"]


def build(profile: Profile) -> list[Service]:
    """All services in start order (stop goes in reverse)."""
    port = profile.port
    state = str(profile.state)
    redis_dir = profile.state / "redis"
    pg = postgres.Postgres(profile.state / "pg", port("postgres"))
    # fmt: off
    kept = firestore_data.latest(profile.state / firestore_data.EXPORTS) if profile.keeps else None
    firestore = firestore_command(port("firestore"), kept)
    pubsub = pubsub_command(port("pubsub"))
    tasks = [
        # -W: google-api-core's end-of-life notice for Python 3.11, on every start.
        str(TASKS_PYTHON), "-W", "ignore::FutureWarning", "-m", "scripts.stacklib.tasks_emulator",
        f"--port={port('tasks')}", f"--state-dir={state}",
        *(f"--queue={path}" for path in profile.queue_paths),
        *([f"--keep={profile.state / 'tasks-kept.json'}"] if profile.keeps else []),
    ]
    redis = [
        "redis-server", "--bind", HOST, "--port", str(port("redis")), "--protected-mode", "yes",
        "--save", "", "--appendonly", "no", "--maxmemory", "128mb",
        # Memorystore's default eviction policy, so a full cache behaves as in production.
        "--maxmemory-policy", "volatile-lru",
        "--dir", str(redis_dir), "--pidfile", str(redis_dir / "redis-server.pid"),
    ]
    relay = [
        sys.executable, "-m", "scripts.stacklib.push_relay", f"--port={port('push-relay')}",
        f"--target={profile.url('agents')}", f"--email={AGENTS_INVOKER_EMAIL}",
        f"--state-dir={state}",
        *(
            [f"--keep={profile.state / KEPT_MESSAGES}", f"--pubsub={HOST}:{port('pubsub')}"]
            + [f"--kept-subscription={path}" for path in pubsub_setup.kept_subscriptions()]
            if profile.keeps
            else []
        ),
    ]
    mail = [
        sys.executable, "-m", "scripts.stacklib.mail_server", f"--smtp-port={port('mail')}",
        f"--web-port={port('mail-web')}", f"--state-dir={profile.state / 'mail'}",
    ]
    model = [
        # One process holds the offline models for every function (see scripts/model_service).
        sys.executable, "-m", "scripts.model_service", f"--host={HOST}", f"--port={port('model')}",
        f"--token-file={tokens.model_token_path(state)}", f"--model-name={LOCAL_MODEL}",
    ]
    # fmt: on
    return [
        Service("firestore", port("firestore"), firestore, lambda: http_ok(port("firestore"))),
        Service("pubsub", port("pubsub"), pubsub, lambda: http_ok(port("pubsub"))),
        Service("tasks", port("tasks"), tasks, lambda: tcp_open(port("tasks"))),
        Service(
            "redis",
            port("redis"),
            redis,
            lambda: redis_ping(port("redis")),
            prepare=lambda: redis_dir.mkdir(exist_ok=True),
        ),
        Service(
            "postgres",
            port("postgres"),
            pg.command(),
            pg.healthy,
            stop_signal=signal.SIGINT,  # "fast" shutdown: SIGTERM would wait for clients
            user=pg.user,
            prepare=pg.init,
        ),
        Service(
            "push-relay",
            port("push-relay"),
            relay,
            lambda: http_ok(port("push-relay"), "/healthz"),
        ),
        Service(
            "mail",
            port("mail"),
            mail,
            lambda: http_ok(port("mail-web"), "/healthz"),
        ),
        Service(
            "model",
            port("model"),
            model,
            lambda: http_ok(port("model"), "/healthz"),
            # llama.cpp runs on one thread (see its --threads); MiniLM's numpy on one beside it.
            env={"OPENBLAS_NUM_THREADS": "1"},
        ),
    ]
