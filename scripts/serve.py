"""Serve every function (one per folder of functions/) on the stack's local ports, and the web
client in front of them; on the dev profile, Cloud Scheduler's jobs too
(``scripts/stacklib/scheduler.py``: tests run those paths themselves, when they choose).

    .venv/bin/python scripts/serve.py up|down|status [--profile dev|test]

Each function runs in its own process exactly as gen2 runs it (functions-framework on
gunicorn), with the environment the stack wrote to ``<state>/env``. ``web`` is
``scripts/web_serve.py``: the built client and the functions' API on one origin.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
# name -> (port offset from the profile's base, signature type)
FUNCTIONS = {
    "turn": (20, "http"),
    "extraction": (21, "http"),
    "resume": (22, "http"),
    "agents": (23, "cloudevent"),
    "memory": (24, "http"),
}
# Everything `up` starts: the functions, and the web client's server (scripts/web_serve.py).
PROCESSES = {**FUNCTIONS, "web": (25, "web")}
SCHEDULER = {"scheduler": (26, "scheduler")}
BASES = {"dev": 8500, "test": 8600}


def processes(profile: str) -> dict[str, tuple[int, str]]:
    return {**PROCESSES, **(SCHEDULER if profile == "dev" else {})}


def base_port(profile: str) -> int:
    """As ``Profile.base_port``: ``STACK_PORT_BASE`` moves the test stack's functions too."""
    if profile == "test" and os.environ.get("STACK_PORT_BASE"):
        return int(os.environ["STACK_PORT_BASE"])
    return BASES[profile]


# Processes this interpreter started, kept so they are reaped (tests start and stop them).
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def state_dir(profile: str) -> Path:
    return ROOT / (".stack" if profile == "dev" else f".stack-{profile}")


def read_env(profile: str) -> dict[str, str]:
    env_file = state_dir(profile) / "env"
    if not env_file.exists():
        sys.exit(f"{env_file} is missing: run scripts/stack up --profile {profile} first")
    pairs = (line.split("=", 1) for line in env_file.read_text().splitlines() if "=" in line)
    return {key: value for key, value in pairs if not key.startswith("#")}


def _pidfile(profile: str, name: str) -> Path:
    return state_dir(profile) / "pids" / f"fn-{name}.pid"


def _alive(pid: int) -> bool:
    if pid in _CHILDREN:
        return _CHILDREN[pid].poll() is None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _running_pid(profile: str, name: str) -> int | None:
    pidfile = _pidfile(profile, name)
    if not pidfile.exists():
        return None
    pid = int(pidfile.read_text())
    return pid if _alive(pid) else None


def command(name: str, port: int) -> list[str]:
    """functions-framework serving one function, as the gen2 runtime does."""
    signature = processes("dev")[name][1]
    if signature == "web":  # it reads the functions' URLs from the environment spawn gives
        return [sys.executable, str(ROOT / "scripts" / "web_serve.py"), "--port", str(port)]
    if signature == "scheduler":  # the dev stack's only
        state = state_dir("dev")
        return [sys.executable, "-m", "scripts.stacklib.scheduler", f"--port={port}",
                f"--state-dir={state}"]  # fmt: skip
    source = ROOT / "functions" / name / "main.py"
    return [
        sys.executable, "-m", "functions_framework", "--target", name, "--source", str(source),
        "--signature-type", signature, "--host", "127.0.0.1", "--port", str(port),
    ]  # fmt: skip


def spawn(
    name: str, port: int, env: dict[str, str], log: IO[bytes] | int
) -> subprocess.Popen[bytes]:
    env = {**env, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        command(name, port), env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )


def wait_ready(port: int, seconds: float = 30.0) -> bool:
    """True once anything answers HTTP on the port (a 405 for GET means: loaded, serving)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1)
            return True
        except urllib.error.HTTPError:
            return True
        except OSError:
            time.sleep(0.01)
    return False


def up(profile: str, extra_env: dict[str, str] | None = None) -> None:
    env = {**os.environ, **read_env(profile), **(extra_env or {})}
    logs = state_dir(profile) / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    _pidfile(profile, "x").parent.mkdir(parents=True, exist_ok=True)
    started: list[tuple[str, int]] = []
    for name, (offset, _) in processes(profile).items():
        port = base_port(profile) + offset
        if _running_pid(profile, name):
            continue
        with open(logs / f"fn-{name}.log", "ab") as log:
            process = spawn(name, port, env, log)
        _CHILDREN[process.pid] = process
        _pidfile(profile, name).write_text(str(process.pid))
        started.append((name, port))
    for name, port in started:
        if not wait_ready(port):
            sys.exit(f"function {name} did not start on port {port}; see {logs}/fn-{name}.log")
        print(f"{name}: http://127.0.0.1:{port}/")


def down(profile: str) -> None:
    for name in processes(profile):
        pid = _running_pid(profile, name)
        if pid is None:
            continue
        os.killpg(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _alive(pid):
            os.killpg(pid, signal.SIGKILL)
        child = _CHILDREN.pop(pid, None)
        if child is not None:
            child.wait(10)
        _pidfile(profile, name).unlink(missing_ok=True)
        print(f"{name}: stopped")


def status(profile: str) -> None:
    for name, (offset, _) in processes(profile).items():
        pid = _running_pid(profile, name)
        where = f"pid {pid} port {base_port(profile) + offset}" if pid else "stopped"
        print(f"{name}: {where}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("command", choices=["up", "down", "status"])
    parser.add_argument("--profile", choices=sorted(BASES), default="dev")
    args = parser.parse_args()
    {"up": up, "down": down, "status": status}[args.command](args.profile)


if __name__ == "__main__":
    main()
