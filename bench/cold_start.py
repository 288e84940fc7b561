"""Cold start of each function: fresh process -> first served response.

Prints, per function, the median over several runs of the time from spawning
functions-framework to its first HTTP answer, next to the median bare import time of the
unavoidable dependencies measured in the same run, and their ratio. Then the first real
``/v1`` turn on a fresh turn function next to a warm one (``bench/cold_turn.py``): the turn
function loads what a turn needs at import, before it listens, so its first answer includes
that and its first turn does not. Network clients still connect on first use.

    .venv/bin/python -m bench.cold_start [--runs 5] [--turn-runs 3]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time

from bench import cold_turn
from scripts.serve import FUNCTIONS, spawn, wait_ready

BARE_IMPORTS = (
    "import functions_framework, langgraph.graph, google.cloud.firestore, "
    "google.cloud.tasks_v2, google.cloud.pubsub_v1, google.genai"
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cold_start(name: str) -> float:
    port = _free_port()
    started = time.monotonic()
    process = spawn(name, port, dict(os.environ), subprocess.DEVNULL)
    try:
        if not wait_ready(port, seconds=60):
            raise TimeoutError(f"{name} did not answer on port {port}")
        return time.monotonic() - started
    finally:
        process.terminate()
        process.wait(10)


def bare_import() -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", BARE_IMPORTS], check=True)
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--turn-runs", type=int, default=3, help="fresh turn functions")
    args = parser.parse_args()
    runs = args.runs
    bare = statistics.median(bare_import() for _ in range(runs))
    print(f"bare import of {BARE_IMPORTS[7:]}: median {bare * 1000:.0f} ms ({runs} runs)")
    print(f"{'function':<12}{'first answer (ms)':>20}{'ratio to bare import':>24}")
    for name in FUNCTIONS:
        median = statistics.median(cold_start(name) for _ in range(runs))
        print(f"{name:<12}{median * 1000:>20.0f}{median / bare:>24.2f}")
    cold_turn.report(cold_turn.measure(args.turn_runs))


if __name__ == "__main__":
    main()
