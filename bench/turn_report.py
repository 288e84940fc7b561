"""What ``bench.turn`` prints: latency, round trips per store, where the time goes, targets."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

TARGET_GREETING_P50_MS = 30.0
TARGET_GREETING_COMMITS = 2
TARGET_FULL_P50_MS = 120.0

ROUND_TRIPS = (  # (label, probe keys summed)
    ("Firestore reads (RPCs)", ("fs.reads",)),
    ("Firestore commits", ("fs.commits",)),
    ("  documents written", ("fs.docs",)),
    ("  Begin/Rollback tx", ("fs.tx",)),
    ("Redis commands", ("redis.cmds",)),
    ("  round trips", ("redis.rtt",)),
    ("PostgreSQL queries", ("pg.queries",)),
    ("  BEGIN/COMMIT/ROLLBACK", ("pg.begin", "pg.commit", "pg.rollback")),
    ("  wire round trips", ("pg.rtt",)),
    ("  connections opened", ("pg.connects",)),
    ("Cloud Tasks create_task", ("tasks.create",)),
)
STORES = (("Firestore", "fs"), ("Redis", "redis"), ("PostgreSQL", "pg"), ("Cloud Tasks", "tasks"))


@dataclass
class Sample:
    ms: float
    prepare_ms: float
    first_chunk_ms: float
    graph_ms: float
    counts: Counter[str]
    store_ms: dict[str, float]
    nodes: list[tuple[str, float]] = field(default_factory=list)
    decided_by: str = ""  # the intent's: rule, understanding, model
    model_calls: int = 0  # before the reply (classification, planning)


def pct(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


@dataclass
class PathFigures:
    label: str
    samples: list[Sample]

    @property
    def short(self) -> str:
        name = self.label.split(",")[0].replace("full memory", "full")
        return name + ("*" if "new chat" in self.label else "")

    def p(self, q: int, attr: str = "ms") -> float:
        return pct([getattr(s, attr) for s in self.samples], q)

    def scheduling_p50(self) -> float:
        """The graph's time outside its nodes: LangGraph's loops, state merges, thread hops."""
        return pct([s.graph_ms - sum(ms for _, ms in s.nodes) for s in self.samples], 50)

    def per_turn(self, keys: tuple[str, ...]) -> list[int]:
        return [sum(s.counts[k] for k in keys) for s in self.samples]

    def store_p50(self, key: str) -> float:
        return pct([s.store_ms.get(key, 0.0) for s in self.samples], 50)

    def rest_p50(self) -> float:
        """Wall time outside every store call: the graph, pydantic, crypto, the model stub."""
        return pct([s.ms - sum(s.store_ms.values()) for s in self.samples], 50)

    def nodes_p50(self) -> list[tuple[str, float, int]]:
        runs: dict[str, list[float]] = {}
        for sample in self.samples:
            for node, ms in sample.nodes:
                runs.setdefault(node, []).append(ms)
        return [(node, pct(values, 50), len(values)) for node, values in runs.items()]


def _count(values: list[int]) -> str:
    low, high, mean = min(values), max(values), statistics.fmean(values)
    return f"{low}" if low == high else f"{mean:.1f} ({low}-{high})"


def report(figures: list[PathFigures], turns: int, warmup: int) -> None:
    print(
        f"bench.turn: {turns} turns per path after {warmup} warm-up, one chat per path "
        "(* rows: first turn of a new chat); scripted model and hash embedder at 0 ms; "
        "test stack (Firestore emulator, Redis, PostgreSQL + pgvector, Cloud Tasks emulator)"
    )
    _latency(figures)
    _round_trips(figures)
    _store_time(figures)
    _nodes(figures)
    _deciders(figures)
    _targets({f.label: f for f in figures})


def _latency(figures: list[PathFigures]) -> None:
    heads = (("turns", 6), ("p50", 8), ("p95", 8), ("max", 8), ("1st chunk p50", 15),
             ("prepare p50", 13), ("graph p50", 11), ("not in nodes", 14))  # fmt: skip
    print(f"\n{'ms (prepare + events)':<24}" + "".join(f"{h:>{w}}" for h, w in heads))
    for f in figures:
        print(
            f"{f.label:<24}{len(f.samples):>6}{f.p(50):>8.1f}{f.p(95):>8.1f}"
            f"{max(s.ms for s in f.samples):>8.1f}{f.p(50, 'first_chunk_ms'):>15.1f}"
            f"{f.p(50, 'prepare_ms'):>13.1f}{f.p(50, 'graph_ms'):>11.1f}"
            f"{f.scheduling_p50():>14.1f}"
        )


def _columns(figures: list[PathFigures], title: str) -> None:
    print(f"\n{title:<26}" + "".join(f"{f.short:>13}" for f in figures))


def _round_trips(figures: list[PathFigures]) -> None:
    _columns(figures, "per turn: mean (min-max)")
    for label, keys in ROUND_TRIPS:
        print(f"{label:<26}" + "".join(f"{_count(f.per_turn(keys)):>13}" for f in figures))


def _store_time(figures: list[PathFigures]) -> None:
    _columns(figures, "ms per turn in, p50")
    for label, key in STORES:
        print(f"{label:<26}" + "".join(f"{f.store_p50(key):>13.1f}" for f in figures))
    print(f"{'outside store calls':<26}" + "".join(f"{f.rest_p50():>13.1f}" for f in figures))


def _nodes(figures: list[PathFigures]) -> None:
    print("\nnodes, p50 ms (of metadata.nodes; [runs] when not every turn)")
    for f in figures:
        parts = [
            f"{node} {ms:.1f}" + ("" if runs == len(f.samples) else f" [{runs}]")
            for node, ms, runs in f.nodes_p50()
        ]
        print(f"  {f.label}: " + ", ".join(parts))


def _deciders(figures: list[PathFigures]) -> None:
    """Deterministic (the greeting rule, the understanding tier) vs the model, per path."""
    print("\nwho decided the intent (turns), model calls per turn before the reply (mean)")
    for f in figures:
        by = Counter(s.decided_by for s in f.samples)
        calls = statistics.mean(s.model_calls for s in f.samples)
        tally = ", ".join(f"{who or 'none'} {n}" for who, n in sorted(by.items()))
        print(f"  {f.label:<24}{tally:<40} {calls:.2f}")


def _targets(by: dict[str, PathFigures]) -> None:
    greeting, simple, full = by["greeting"], by["simple"], by["full memory"]
    commits = max(greeting.per_turn(("fs.commits",)))
    checks = (
        (f"greeting p50 < {TARGET_GREETING_P50_MS:.0f} ms", f"{greeting.p(50):.1f} ms",
         greeting.p(50) < TARGET_GREETING_P50_MS),
        (f"greeting Firestore writes <= {TARGET_GREETING_COMMITS} per turn",
         f"{commits} commits (max)", commits <= TARGET_GREETING_COMMITS),
        (f"full memory p50 < {TARGET_FULL_P50_MS:.0f} ms", f"{full.p(50):.1f} ms",
         full.p(50) < TARGET_FULL_P50_MS),
    )  # fmt: skip
    print("\ntargets")
    for name, value, met in checks:
        print(f"  {name:<44}{value:>20}   {'met' if met else 'MISSED'}")
    print(
        f"ratios of p50: simple / greeting {simple.p(50) / greeting.p(50):.1f}x, "
        f"full / simple {full.p(50) / simple.p(50):.1f}x, "
        f"full / greeting {full.p(50) / greeting.p(50):.1f}x"
    )
