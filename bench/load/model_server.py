"""The fake Vertex endpoint with the e2e rules and a realistic latency, in a process of its
own (the load generator must not share a GIL with it). Prints its base URL, then serves
until it is stopped.

    .venv/bin/python -m bench.load.model_server [--first-token-ms 300] [--between-ms 30]
"""

from __future__ import annotations

import argparse
import signal
import threading

from testkit.model_rules import reply_for
from testkit.vertex_server import FakeVertexServer, Latency

TOKEN = "bench-load-token"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--first-token-ms", type=float, default=300.0)
    parser.add_argument("--between-ms", type=float, default=30.0)
    args = parser.parse_args()
    latency = Latency(args.first_token_ms / 1000, args.between_ms / 1000)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with FakeVertexServer(token=TOKEN, fallback=reply_for, latency=latency) as model:
        print(model.base_url, flush=True)
        stop.wait()


if __name__ == "__main__":
    main()
