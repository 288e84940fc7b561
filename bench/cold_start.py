"""Cold start of each function: fresh process -> first served response.

Prints, per function, the median over several runs of the time from spawning
functions-framework to its first HTTP answer, next to the median bare import time of the
unavoidable dependencies measured in the same run, and their ratio.

    .venv/bin/python -m bench.cold_start [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FUNCTIONS = {"turn": "http", "extraction": "http", "resume": "http", "agents": "cloudevent"}
BARE_IMPORTS = (
    "import functions_framework, langgraph.graph, google.cloud.firestore, "
    "google.cloud.tasks_v2, google.cloud.pubsub_v1, google.genai"
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _first_answer(port: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1)
            return
        except urllib.error.HTTPError:
            return  # 405 for GET is an answer: the function is loaded and serving
        except OSError:
            time.sleep(0.005)
    raise TimeoutError(f"no answer on port {port}")


def cold_start(name: str, signature: str) -> float:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.monotonic()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "functions_framework",
            "--target",
            name,
            "--source",
            str(ROOT / "functions" / name / "main.py"),
            "--signature-type",
            signature,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _first_answer(port, started + 60)
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
    runs = parser.parse_args().runs
    bare = statistics.median(bare_import() for _ in range(runs))
    print(f"bare import of {BARE_IMPORTS[7:]}: median {bare * 1000:.0f} ms ({runs} runs)")
    print(f"{'function':<12}{'first answer (ms)':>20}{'ratio to bare import':>24}")
    for name, signature in FUNCTIONS.items():
        median = statistics.median(cold_start(name, signature) for _ in range(runs))
        print(f"{name:<12}{median * 1000:>20.0f}{median / bare:>24.2f}")


if __name__ == "__main__":
    main()
