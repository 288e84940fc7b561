"""Where a ``bench.turn --local`` turn's time goes: the turn function's own log, and the CPU
each process of the stack spent per turn.

The turn function logs every node's milliseconds and the graph's total under the turn id,
which the bench derives from (user, client_message_id) as the function does; what a turn
took outside the graph (HTTP hops, claim, auth) is the bench's seconds minus that total.
CPU is read from ``/proc`` (Linux), summed over each process's children (gunicorn's
workers, the emulators' JVMs).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from scripts.serve import state_dir
from scripts.stacklib.profile import Profile

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass
class Span:
    """One turn as the turn function logged it."""

    graph_ms: float = 0.0
    nodes: dict[str, float] = field(default_factory=dict)
    tokens: int = 0  # the model's, in and out: 0 when the tier settled the turn alone
    output_tokens: int = 0  # the model's output: the reply's length when it wrote one

    def slowest(self) -> tuple[str, float]:
        return max(self.nodes.items(), key=lambda item: item[1], default=("-", 0.0))


def spans(log: Path, turn_ids: set[str]) -> dict[str, Span]:
    """The graph's time and each node's, for the given turns (other lines are skipped)."""
    found: dict[str, Span] = {}
    if not log.exists():
        return found
    with log.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if not line.startswith("{") or '"turn_id"' not in line:
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            turn_id = entry.get("turn_id")
            if turn_id not in turn_ids:
                continue
            span = found.setdefault(turn_id, Span())
            if entry.get("message") == "node done":
                span.nodes[entry["node"]] = float(entry.get("ms", 0.0))
            elif entry.get("message") == "turn done":
                span.graph_ms = float(entry.get("graph_ms", 0.0))
                span.tokens = int(entry.get("tokens", 0))
                span.output_tokens = int(entry.get("output_tokens", 0))
    return found


def stack_processes(profile: Profile) -> dict[str, int]:
    """The stack's services and the served functions, by name: their pid files."""
    files = {path.stem: path for path in profile.run.glob("*.pid")}
    files |= {path.stem: path for path in (state_dir(profile.name) / "pids").glob("fn-*.pid")}
    pids = {}
    for name, path in files.items():
        try:
            pids[name] = int(path.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return pids


def cpu_seconds(pids: dict[str, int]) -> dict[str, float]:
    """User + system CPU of each process and its descendants so far (zero off Linux)."""
    parents: dict[int, int] = {}
    own: dict[int, float] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parents[int(entry.name)] = int(fields[1])
        own[int(entry.name)] = (int(fields[11]) + int(fields[12])) / _TICKS

    def total(pid: int) -> float:
        return own.get(pid, 0.0) + sum(total(c) for c, p in parents.items() if p == pid)

    return {name: total(pid) for name, pid in pids.items()}


def cpu_line(before: dict[str, float], after: dict[str, float], turns: int) -> str:
    """CPU milliseconds per turn by process, the busiest first."""
    spent = {name: (after[name] - before.get(name, 0.0)) * 1000 / turns for name in after}
    busy = sorted((ms, name) for name, ms in spent.items() if ms >= 1)
    return ", ".join(f"{name} {ms:.0f}" for ms, name in reversed(busy)) or "-"
