"""The local stack: emulators, Redis, PostgreSQL, push relay, local model service.

See `scripts/stack --help`.

    scripts/stack up|down|status [--profile dev|test]   (down --wipe also deletes the state)

`up` is idempotent: running services are kept, missing ones started, then the Pub/Sub topology,
the database and <state>/env are (re)made. Every service binds 127.0.0.1 and logs to
<state>/logs/<service>.log; its PID file is <state>/run/<service>.pid.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from stacklib import firestore_data, procs, pubsub_setup, tokens
from stacklib.postgres import Postgres
from stacklib.profile import BASE_PORTS, HOST, ROOT, Profile
from stacklib.services import Service, build, port_free

START_TIMEOUT = 90.0
FUNCTIONS = ("turn", "extraction", "resume", "agents", "memory")  # served by scripts/serve.py


@contextmanager
def locked(profile: Profile) -> Iterator[None]:
    """One `up`/`down` per profile at a time (make dev and make test may race)."""
    profile.state.mkdir(exist_ok=True)
    with open(profile.state / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _log_tail(profile: Profile, name: str, lines: int = 15) -> str:
    try:
        text = profile.log_file(name).read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _spawn_missing(profile: Profile, services: list[Service]) -> None:
    started = []
    for service in services:
        if procs.running_pid(profile.pid_file(service.name)):
            continue
        if not port_free(service.port):
            raise SystemExit(
                f"{service.name}: {HOST}:{service.port} is taken by a process this stack did "
                f"not start (see `ss -ltnp 'sport = :{service.port}'`)"
            )
        if shutil.which(service.command[0]) is None:
            raise SystemExit(f"{service.name}: no {service.command[0]}: run scripts/bootstrap.sh")
        service.prepare()
        procs.spawn(
            service.command,
            profile.log_file(service.name),
            profile.pid_file(service.name),
            cwd=ROOT,
            env=service.environment(),
            user=service.user,
        )
        started.append(service.name)
    if started:
        print(f"started: {', '.join(started)}")


def _wait_healthy(profile: Profile, services: list[Service]) -> None:
    """Poll all services together: the JVMs start in parallel."""
    pending = list(services)
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        for service in list(pending):
            if not procs.running_pid(profile.pid_file(service.name)):
                tail = _log_tail(profile, service.name)
                raise SystemExit(f"{service.name} exited during start; its log ends:\n{tail}")
            if procs.check(service.healthy):
                pending.remove(service)
        if not pending:
            return
        if time.monotonic() > deadline:
            names = ", ".join(s.name for s in pending)
            raise SystemExit(f"not healthy after {START_TIMEOUT:.0f}s: {names} (see logs)")
        time.sleep(0.05)


def _write_env(profile: Profile, env: dict[str, str]) -> None:
    lines = ["# Written by scripts/stack up; regenerated on every up."]
    lines += [f"{key}={value}" for key, value in env.items()]
    tmp = profile.env_file.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n")
    tmp.replace(profile.env_file)


def _migrate(env: dict[str, str]) -> None:
    script = ROOT / "scripts" / "migrate.py"
    if script.exists():
        env = {**os.environ, **env}
        subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env, check=True)


def up(profile: Profile) -> None:
    began = time.monotonic()
    for directory in (profile.logs, profile.run):
        directory.mkdir(parents=True, exist_ok=True)
    tokens.ensure_keys(profile.state)
    services = build(profile)
    _spawn_missing(profile, services)
    _wait_healthy(profile, services)
    pubsub_setup.ensure_topology(profile)
    pg = Postgres(profile.state / "pg", profile.port("postgres"))
    pg.ensure_database()
    env = profile.env(pg.url, tokens.model_token(profile.state))
    _write_env(profile, env)
    _migrate(env)
    print(f"stack '{profile.name}' up in {time.monotonic() - began:.1f}s; env: {profile.env_file}")


def down(profile: Profile, wipe: bool) -> None:
    if profile.keeps and not wipe:
        exports = profile.state / firestore_data.EXPORTS
        if firestore_data.save(profile.port("firestore"), exports) is not None:
            print(f"saved the Firestore documents to {exports}")
    for service in reversed(build(profile)):
        if procs.stop(profile.pid_file(service.name), service.stop_signal):
            print(f"stopped {service.name}")
    profile.env_file.unlink(missing_ok=True)  # tells tests and functions the stack is gone
    if wipe:
        shutil.rmtree(profile.state)
        print(f"deleted {profile.state}")


def status(profile: Profile) -> int:
    print(f"{'service':<11} {'state':<9} {'pid':>7} {'port':>5} {'rss MB':>7} {'pss MB':>7}")
    all_healthy = True
    for service in build(profile):
        pid = procs.running_pid(profile.pid_file(service.name))
        rss = pss = 0
        if pid is None:
            state = "stopped"
        else:
            rss, pss = procs.memory_kib(pid)
            state = "healthy" if procs.check(service.healthy) else "unhealthy"
        all_healthy &= state == "healthy"
        print(
            f"{service.name:<11} {state:<9} {pid or '-':>7} {service.port:>5} "
            f"{rss / 1024:>7.0f} {pss / 1024:>7.0f}"
        )
    for name in FUNCTIONS:
        listening = "listening" if not port_free(profile.port(name)) else "-"
        print(f"{name:<11} {listening:<9} {'':>7} {profile.port(name):>5}  {profile.url(name)}")
    print(f"env: {profile.env_file if profile.env_file.exists() else '(not written)'}")
    return 0 if all_healthy else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/stack", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["up", "down", "status"])
    parser.add_argument("--profile", choices=sorted(BASE_PORTS), default="dev")
    parser.add_argument("--wipe", action="store_true", help="down: also delete the state dir")
    args = parser.parse_args(argv)
    profile = Profile(args.profile)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `scripts/stack status | head` ends quietly
    if args.command == "status":
        return status(profile)
    if args.command == "down" and not profile.state.exists():
        print(f"stack '{profile.name}' has no state ({profile.state}): nothing to stop")
        return 0
    with locked(profile):
        if args.command == "up":
            up(profile)
        else:
            down(profile, args.wipe)
    return 0


if __name__ == "__main__":
    sys.exit(main())
