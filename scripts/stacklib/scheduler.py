"""Cloud Scheduler, played for the dev stack: the jobs terraform deploys, run on the local
functions with the same OIDC token (the tasks invoker's, for the same audience).

Without it, ``make dev`` never drains the outbox of a chat that went quiet, never gives a
task to a reminder further ahead than Cloud Tasks' 30 days, and never expires a fact. Every
job runs once at start (what was due while the stack was down) and then at its cadence; the
reminder sweep runs every minute here rather than every ten, so a restart catches up fast.
``tests/terraform/test_local_scheduler.py`` keeps this table in step with terraform's.

    python -m scripts.stacklib.scheduler --port P --state-dir DIR   (environment: .stack/env)

``GET /`` on the port answers each job's last run, for a developer wondering.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urljoin

from .profile import HOST, TASKS_INVOKER_EMAIL
from .tokens import mint_internal_token

log = logging.getLogger("scheduler")
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback targets
TIMEOUT = 300.0  # terraform's longest attempt_deadline
RETRY_UNANSWERED = 5.0  # seconds


@dataclass(frozen=True)
class Job:
    name: str
    function: str  # whose URL the path is on
    path: str
    every: float  # seconds
    audience_is_function: bool = False  # else the job's own URL, as terraform sets it


JOBS = (
    Job("outbox-drain", "resume", "/outbox/drain", every=60),
    Job("reminder-sweep", "resume", "/reminders/sweep", every=60),
    Job("fact-expiry", "extraction", "/expire", every=3600, audience_is_function=True),
)


def function_url(function: str, env: dict[str, str]) -> str:
    """The function's URL as the functions know it (``RESUME_URL``, ``EXTRACTION_URL``)."""
    return env[f"{function.upper()}_URL"]


def run(job: Job, env: dict[str, str], state_dir: str) -> int:
    """One run, as Cloud Scheduler makes it: a POST of ``{}``; the status, 0 if none came."""
    base = function_url(job.function, env)
    url = urljoin(base, job.path.lstrip("/"))
    token = mint_internal_token(state_dir, base if job.audience_is_function else url,
                                TASKS_INVOKER_EMAIL)  # fmt: skip
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    request = urllib.request.Request(url, b"{}", headers, method="POST")
    try:
        with _OPENER.open(request, timeout=TIMEOUT) as response:
            response.read()
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code
    except OSError as error:
        log.warning("%s: %s", url, error)
        return 0


class Runs:
    """Each job's last run, for the status page."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: dict[str, dict[str, Any]] = {}

    def record(self, job: Job, status: int) -> None:
        with self._lock:
            self._last[job.name] = {"at": time.time(), "status": status, "every": job.every}

    def body(self) -> bytes:
        with self._lock:
            return json.dumps(self._last).encode()


def keep_running(job: Job, env: dict[str, str], state_dir: str, runs: Runs) -> None:
    while True:
        began = time.monotonic()
        status = run(job, env, state_dir)
        runs.record(job, status)
        log.info("%s -> %s", job.name, status)
        every = job.every if status else RETRY_UNANSWERED  # the function is still starting
        time.sleep(max(0.0, every - (time.monotonic() - began)))


def serve_status(port: int, runs: Runs) -> None:
    class Status(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = runs.body()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    ThreadingHTTPServer((HOST, port), Status).serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--state-dir", required=True, help="holds auth/internal_key.pem")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    env, runs = dict(os.environ), Runs()
    for job in JOBS:
        threading.Thread(
            target=keep_running, args=(job, env, args.state_dir, runs), daemon=True
        ).start()
    serve_status(args.port, runs)


if __name__ == "__main__":
    main()
