"""Detached service processes: start in their own process group, find by PID file, stop by group.

A PID file holds ``<pid> <start time>`` (field 22 of /proc/<pid>/stat), so a PID the kernel has
since handed to another process is never mistaken for ours.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def _stat(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces; everything after its ')' is space-separated.
    return raw[raw.rindex(")") + 2 :].split()


def _alive(pid: int) -> bool:
    fields = _stat(pid)
    # Zombies count as gone: PID 1 here may be slow to reap orphans.
    return fields is not None and fields[0] not in ("Z", "X")


def _start_time(pid: int) -> str | None:
    fields = _stat(pid)
    return fields[19] if fields else None


def running_pid(pid_file: Path) -> int | None:
    """The PID recorded in ``pid_file`` if that very process still runs."""
    try:
        pid_text, started = pid_file.read_text().split()
        pid = int(pid_text)
    except (OSError, ValueError):
        return None
    if _alive(pid) and _start_time(pid) == started:
        return pid
    return None


def as_user(name: str) -> dict[str, Any]:
    """Popen arguments that drop root for ``name``: uid, gid and no root supplementary groups."""
    entry = pwd.getpwnam(name)
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}


def spawn(
    cmd: Sequence[str],
    log_file: Path,
    pid_file: Path,
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    user: str | None = None,
) -> int:
    log_file.parent.mkdir(parents=True, exist_ok=True)
    pid_file.parent.mkdir(parents=True, exist_ok=True)
    identity = as_user(user) if user else {}
    with open(log_file, "ab") as log:
        log.write(f"\n--- {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(cmd)}\n".encode())
        log.flush()
        proc = subprocess.Popen(
            list(cmd),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # own process group: stop() signals it whole
            **identity,
        )
    pid_file.write_text(f"{proc.pid} {_start_time(proc.pid)}\n")
    return proc.pid


def _family(leader: int) -> set[int]:
    """Live processes in ``leader``'s process group or descended from it. Both, because
    PostgreSQL's children call setsid() and so leave the postmaster's group."""
    parents: dict[int, int] = {}
    family = set()
    for entry in Path("/proc").iterdir():
        fields = _stat(int(entry.name)) if entry.name.isdigit() else None
        if fields and fields[0] not in ("Z", "X"):
            parents[int(entry.name)] = int(fields[1])
            if fields[2] == str(leader):
                family.add(int(entry.name))
    grew = True
    while grew:
        children = {pid for pid, ppid in parents.items() if ppid in family} - family
        family |= children
        grew = bool(children)
    return family


def _kill(pids: set[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def stop(pid_file: Path, sig: signal.Signals = signal.SIGTERM, timeout: float = 10.0) -> bool:
    """Stop the PID file's process and its family; True if something was stopped.

    ``sig`` goes to the process group; whatever is left of the family (taken before the
    signal, since orphans are re-parented) after ``timeout`` is killed.
    """
    pid = running_pid(pid_file)
    if pid is None:
        pid_file.unlink(missing_ok=True)
        return False
    family = _family(pid)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, sig)

    def gone() -> bool:
        return not any(_alive(member) for member in family | _family(pid))

    if not wait_for(gone, timeout):
        _kill(family | _family(pid), signal.SIGKILL)
        if not wait_for(gone, 5.0):
            raise RuntimeError(f"{pid_file.stem}: processes survived SIGKILL: {sorted(family)}")
    pid_file.unlink(missing_ok=True)
    return True


def memory_kib(pid: int) -> tuple[int, int]:
    """(RSS, PSS) in KiB summed over the process family: PSS counts PostgreSQL's shared
    buffers once instead of once per process."""
    rss = pss = 0
    for member in _family(pid):
        try:
            for line in Path(f"/proc/{member}/smaps_rollup").read_text().splitlines():
                if line.startswith("Rss:"):
                    rss += int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss += int(line.split()[1])
        except OSError:
            continue
    return rss, pss


def check(probe: Callable[[], bool]) -> bool:
    try:
        return probe()
    except Exception:  # a service that is starting (or hung) may fail its probe in any way
        return False


def wait_for(probe: Callable[[], bool], timeout: float, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while not check(probe):
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)
    return True
