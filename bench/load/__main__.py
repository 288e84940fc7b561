"""Load and soak of the five functions with Locust (headless, bounded, loopback only).

    .venv/bin/python -m bench.load [--profile dev] [--users 8,32,64] [--seconds 60]
                                   [--soak-minutes 0] [--first-token-ms 300]

Needs the stack of the profile up (``make dev``, or ``scripts/stack up --profile test``).
The functions are served again with the fake Vertex endpoint as their model (the e2e rules,
``--first-token-ms`` to the first token, 30 ms between tokens) and a rate limit out of the
way, then restored as they were. For each user count, Locust runs the mixed workload of
``locustfile.py`` for ``--seconds``; printed: turns/s, p50/p95/p99 per path, errors by path
and code; then, once background work settled, duplicated messages, facts and actions
(each must be 0). ``--soak-minutes``: one more run at the last user count, printing every
function process's resident memory (with its children) at start and end.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.load.checks import duplicates
from bench.load.model_server import TOKEN
from scripts import serve
from scripts.stacklib import procs
from scripts.stacklib.profile import Profile
from testkit.stack_env import load_stack_env

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", choices=sorted(serve.BASES), default="dev")
    parser.add_argument("--users", default="8,32,64")
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--soak-minutes", type=float, default=0.0)
    parser.add_argument("--first-token-ms", type=float, default=300.0)
    args = parser.parse_args()
    env_file = serve.state_dir(args.profile) / "env"
    if not load_stack_env(env_file):
        raise SystemExit(f"{env_file} is missing: start the {args.profile} stack first")
    serving = ["-m", "bench.load.model_server", f"--first-token-ms={args.first_token_ms}"]
    model = subprocess.Popen([sys.executable, *serving], stdout=subprocess.PIPE, text=True)
    try:
        base_url = (model.stdout.readline() if model.stdout else "").strip()
        _serve_with_model(args.profile, base_url)
        _run(args.profile, 4, 15, report=False)  # warm: first requests load each function
        counts = [int(n) for n in args.users.split(",")]
        for users in counts:
            _run(args.profile, users, args.seconds)
        if args.soak_minutes:
            _soak(args.profile, counts[-1], int(args.soak_minutes * 60))
    finally:
        model.terminate()
        model.wait(10)
        serve.down(args.profile)
        serve.up(args.profile)  # as they were: the profile's own model


def _serve_with_model(profile: str, base_url: str) -> None:
    serve.down(profile)
    serve.up(
        profile,
        extra_env={
            "MODEL_PROVIDER": "vertex",
            "VERTEX_BASE_URL": base_url,
            "VERTEX_ACCESS_TOKEN": TOKEN,
            # The fake embeds at 768 dimensions (the dev profile's MiniLM has 384).
            "VERTEX_EMBEDDING_MODEL": "gemini-embedding-001",
            "EMBEDDING_DIMENSION": "768",
            # The workload's markers steer the fake model, as in the e2e tests; the tier
            # would read "Add a reminder ..." itself and the approval path would not run.
            "UNDERSTANDING_TIER": "false",
            "RATE_LIMIT_PER_MINUTE": "100000",
            "LOG_LEVEL": "WARNING",
        },
    )


def _run(profile: str, users: int, seconds: int, report: bool = True) -> dict[str, Any]:
    serve.read_env(profile)  # exits, saying how, when the stack is not up
    origin = Profile(profile).url("web").rstrip("/")  # /v1 through the one origin
    with tempfile.TemporaryDirectory(prefix="load-") as tmp:
        out = Path(tmp)
        started = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "locust", "-f", str(HERE / "locustfile.py"), "--headless",
             "-u", str(users), "-r", str(users), "-t", f"{seconds}s", "--host", origin,
             "--csv", str(out / "run"), "--only-summary", "--loglevel", "ERROR"],
            env={**os.environ, "LOAD_STATE_DIR": str(serve.state_dir(profile)),
                 "LOAD_USERS_FILE": str(out / "users.json")},
            check=False, capture_output=True, text=True,
        )  # fmt: skip
        elapsed = time.monotonic() - started
        stats = _stats(out / "run_stats.csv")
        errors = _errors(out / "run_failures.csv")
        chats = (
            json.loads((out / "users.json").read_text()) if (out / "users.json").exists() else {}
        )
    if not report:
        return stats
    _print(users, seconds, elapsed, stats, errors)
    time.sleep(10)  # background work (extraction, agent jobs) settles
    found = duplicates(chats)
    print(f"  duplicates: {found}  ({len(chats)} users checked)")
    return stats


def _stats(path: Path) -> dict[str, dict[str, str]]:
    with path.open() as handle:
        return {row["Name"]: row for row in csv.DictReader(handle)}


def _errors(path: Path) -> dict[str, int]:
    if not path.exists():
        return {}
    with path.open() as handle:
        return {f"{r['Name']} {r['Error']}": int(r["Occurrences"]) for r in csv.DictReader(handle)}


def _print(
    users: int,
    seconds: int,
    elapsed: float,
    stats: dict[str, dict[str, str]],
    errors: dict[str, int],
) -> None:
    total = stats.get("Aggregated", {})
    rate, count = float(total.get("Requests/s", 0)), total.get("Request Count")
    print(f"\n{users} users, {seconds} s (wall {elapsed:.0f} s): {rate:.1f} requests/s, "
          f"{count} requests, {total.get('Failure Count')} failed")  # fmt: skip
    print(f"  {'path':<18} {'n':>6} {'req/s':>6} {'p50':>6} {'p95':>6} {'p99':>6}  (ms)")
    for name, row in sorted(stats.items()):
        if name == "Aggregated":
            continue
        print(f"  {name:<18} {row['Request Count']:>6} {float(row['Requests/s']):>6.1f} "
              f"{row['50%']:>6} {row['95%']:>6} {row['99%']:>6}")  # fmt: skip
    print(f"  errors by path and code: {errors or 'none'}")


def _soak(profile: str, users: int, seconds: int) -> None:
    before = _memory(profile)
    _run(profile, users, seconds)
    after = _memory(profile)
    print(f"\nsoak {seconds / 60:.0f} min at {users} users: resident memory per function")
    for name in serve.FUNCTIONS:
        start, end = before.get(name, 0), after.get(name, 0)
        growth = (end - start) / start * 100 if start else 0.0
        print(f"  {name:<11} {start / 1024:>7.0f} MB -> {end / 1024:>7.0f} MB  ({growth:+.1f} %)")


def _memory(profile: str) -> dict[str, int]:
    """RSS in KiB of each function's process family (gunicorn's arbiter and worker)."""
    found = {}
    for name in serve.FUNCTIONS:
        pid_file = serve.state_dir(profile) / "pids" / f"fn-{name}.pid"
        if pid_file.exists():
            found[name] = procs.memory_kib(int(pid_file.read_text()))[0]
    return found


if __name__ == "__main__":
    main()
