"""Cloud Tasks emulator: PyPI's gcloud-tasks-emulator with the gaps that matter here closed.

Runs in .tools/tasks-venv (the package pins protobuf<5). The package supplies the gRPC
service wiring and queue bookkeeping; this module replaces what it gets wrong against real
Cloud Tasks for HTTP-target tasks:

- binds 127.0.0.1 only (the package binds [::]);
- task ids and sizes are validated as Cloud Tasks does (INVALID_ARGUMENT);
- a task name is reserved while the task exists and for a while after it ran or was deleted:
  reusing it answers ALREADY_EXISTS (the package queues duplicates);
- failed attempts back off exponentially and stop after --max-attempts (the package retries
  every 0.1 s, forever by default);
- tasks are dispatched concurrently with a deadline (the package sends one at a time, no
  timeout, so one slow handler stalls the queue);
- ``http_request.oidc_token`` yields ``Authorization: Bearer <RS256 JWT>`` signed by the stack's
  internal key, and the X-CloudTasks-* headers carry what Cloud Tasks sends;
- GetTask and DeleteTask work; unknown queues answer NOT_FOUND;
- with ``--keep FILE`` (the dev stack) the tasks outlive the process, as Cloud Tasks' own do:
  a reminder queued for tomorrow still rings after ``make down`` and ``make dev``
  (``kept_tasks``).

    python -m scripts.stacklib.tasks_emulator --port P --state-dir DIR --queue QUEUE_PATH
"""

from __future__ import annotations

import argparse
import logging
import re
import threading
import time
import urllib.error
import urllib.request
import uuid
from concurrent import futures
from datetime import UTC, datetime, timedelta
from typing import Any

import grpc
from gcloud_tasks_emulator import server as base
from gcloud_tasks_emulator.cloudtasks_pb2_grpc import add_CloudTasksServicer_to_server
from google.api_core.exceptions import AlreadyExists, GoogleAPICallError, InvalidArgument, NotFound
from google.cloud.tasks_v2 import HttpMethod, Queue, Task
from google.protobuf import empty_pb2

from . import kept_file, kept_tasks
from .profile import HOST
from .tokens import mint_internal_token

log = logging.getLogger("tasks-emulator")
TASK_ID = re.compile(r"^[A-Za-z0-9_-]{1,500}$")
MAX_TASK_BYTES = 1024 * 1024
DEFAULT_DEADLINE = 600.0  # Cloud Tasks' default dispatch deadline for HTTP targets
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback targets


def _now() -> datetime:
    return datetime.now(UTC)


class State(base.QueueState):
    def __init__(self, args: argparse.Namespace) -> None:
        super().__init__("", 0, args.max_attempts - 1)
        self._args = args
        self._lock = threading.RLock()
        self._inflight: dict[str, Task] = {}
        # Task name -> monotonic time from which it may be reused (inf while the task exists).
        self._reserved: dict[str, float] = {}
        self.changed = threading.Event()  # something to write to --keep

    # -- API ---------------------------------------------------------------------------------
    def create_queue(self, parent: str | None, queue: Queue) -> Queue:
        with self._lock:
            return super().create_queue(parent, queue)

    def delete_queue(self, name: str) -> None:
        with self._lock:
            super().delete_queue(name)

    def purge_queue(self, queue_name: str) -> Queue:
        with self._lock:
            for task in self._queue_tasks.get(queue_name, []):
                self._release(task.name)
            self.changed.set()
            return super().purge_queue(queue_name)

    def create_task(self, queue: str, task: Task) -> Task:
        with self._lock:
            if queue not in self._queue_tasks:
                raise NotFound(f"Queue {queue} does not exist.")
            if not task.http_request.url:
                raise InvalidArgument("only HTTP-target tasks are emulated")
            if len(Task.serialize(task)) > MAX_TASK_BYTES:
                raise InvalidArgument("Task size too large: the limit is 1 MB")
            if task.name:
                parent, _, task_id = task.name.rpartition("/tasks/")
                if parent != queue or not TASK_ID.match(task_id):
                    raise InvalidArgument(f"invalid task name {task.name} for queue {queue}")
                self._forget_expired()
                if task.name in self._reserved:
                    raise AlreadyExists("Requested entity already exists")
            else:
                task.name = f"{queue}/tasks/{uuid.uuid4().int % 10**19}"
            task.create_time = _now()
            task.schedule_time = task.schedule_time or task.create_time
            task.http_request.http_method = task.http_request.http_method or HttpMethod.POST
            self._reserved[task.name] = float("inf")
            self._queue_tasks[queue].append(task)
            self.changed.set()
        log.info("created %s (due %s)", task.name, task.schedule_time.isoformat())
        return task

    def get_task(self, name: str) -> Task:
        with self._lock:
            task = self._inflight.get(name) or self._find(name)
        if task is None:
            raise NotFound(f"Task {name} does not exist.")
        return task

    def delete_task(self, name: str) -> None:
        with self._lock:
            task = self._find(name)
            if task is None:
                raise NotFound(f"Task {name} does not exist.")
            self._queue_tasks[self._queue_of(name)].remove(task)
            self._release(name)
            self.changed.set()

    def run_task(self, name: str) -> Task:
        with self._lock:
            task = self._find(name)
            if task is None:
                raise NotFound(f"Task {name} does not exist.")
            self._queue_tasks[self._queue_of(name)].remove(task)
            self._inflight[name] = task
        self.attempt(task)
        return task

    # -- dispatch ----------------------------------------------------------------------------
    def take_due(self) -> list[Task]:
        """Remove and return the tasks whose time has come in running queues."""
        now = _now()
        due: list[Task] = []
        with self._lock:
            for queue, tasks in self._queue_tasks.items():
                if self._queues[queue].state != Queue.State.RUNNING:
                    continue
                ready = [t for t in tasks if t.schedule_time <= now]
                if ready:
                    tasks[:] = [t for t in tasks if t.schedule_time > now]
                    self._inflight.update((t.name, t) for t in ready)
                    due.extend(ready)
        return due

    def attempt(self, task: Task) -> None:
        task.dispatch_count += 1
        try:
            status = self._send(task)
        except Exception:  # never lose a task to a bug here: count it as a failed attempt
            log.exception("dispatching %s", task.name)
            status = 0
        if status:
            task.response_count += 1
        task.last_attempt = {
            "dispatch_time": _now(),
            "response_status": {"code": 0 if 200 <= status < 300 else 2, "message": str(status)},
        }
        with self._lock:
            self._inflight.pop(task.name, None)
            queue = self._queue_of(task.name)
            if 200 <= status < 300 or task.dispatch_count >= self._args.max_attempts:
                outcome = "done" if 200 <= status < 300 else "gave up"
                self._release(task.name)
            elif queue in self._queue_tasks and task.name in self._reserved:
                delay = min(
                    self._args.min_backoff * 2 ** (task.dispatch_count - 1), self._args.max_backoff
                )
                task.schedule_time = _now() + timedelta(seconds=delay)
                self._queue_tasks[queue].append(task)
                outcome = f"retry in {delay:g}s"
            else:
                outcome = "dropped (deleted meanwhile)"
            self.changed.set()
        log.info("%s attempt %d -> %s, %s", task.name, task.dispatch_count, status, outcome)

    def _send(self, task: Task) -> int:
        """One HTTP attempt, with the headers Cloud Tasks adds; 0 when nothing answered."""
        http = task.http_request
        headers = dict(http.headers)
        if http.body and not any(k.lower() == "content-type" for k in headers):
            headers["Content-Type"] = "application/octet-stream"
        headers.update(
            {
                "User-Agent": "Google-Cloud-Tasks",
                "X-CloudTasks-QueueName": self._queue_of(task.name).rsplit("/", 1)[-1],
                "X-CloudTasks-TaskName": task.name.rsplit("/", 1)[-1],
                "X-CloudTasks-TaskRetryCount": str(task.dispatch_count - 1),
                "X-CloudTasks-TaskExecutionCount": str(task.response_count),
                "X-CloudTasks-TaskETA": f"{task.schedule_time.timestamp():.6f}",
            }
        )
        oidc = http.oidc_token
        if oidc.service_account_email:
            token = mint_internal_token(
                self._args.state_dir, oidc.audience or http.url, oidc.service_account_email
            )
            headers["Authorization"] = f"Bearer {token}"
        deadline = task.dispatch_deadline.total_seconds() or DEFAULT_DEADLINE
        method = HttpMethod(http.http_method).name
        request = urllib.request.Request(http.url, http.body or None, headers, method=method)
        try:
            with _OPENER.open(request, timeout=deadline) as response:
                response.read()
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return exc.code
        except (OSError, ValueError) as exc:
            log.warning("%s: %s", http.url, exc)
            return 0

    # -- kept across restarts (--keep) -------------------------------------------------------
    def snapshot(self) -> kept_tasks.Snapshot:
        """Every task not yet done (one being sent counts: its attempt may not finish), and
        the names still reserved, as seconds left."""
        with self._lock:
            self.changed.clear()
            tasks = [(q, t) for q, queued in self._queue_tasks.items() for t in queued]
            tasks += [(self._queue_of(n), t) for n, t in self._inflight.items()]
            now = time.monotonic()
            held = {n: until - now for n, until in self._reserved.items() if until != float("inf")}
        return kept_tasks.Snapshot(tasks, {n: left for n, left in held.items() if left > 0})

    def restore(self, kept: kept_tasks.Snapshot) -> None:
        with self._lock:
            now = time.monotonic()
            for queue, task in kept.tasks:
                if queue in self._queue_tasks and task.name not in self._reserved:
                    self._reserved[task.name] = float("inf")
                    self._queue_tasks[queue].append(task)
            for name, left in kept.reserved.items():
                self._reserved.setdefault(name, now + left)

    # -- bookkeeping -------------------------------------------------------------------------
    @staticmethod
    def _queue_of(task_name: str) -> str:
        return task_name.rsplit("/tasks/", 1)[0]

    def _find(self, name: str) -> Task | None:
        tasks = self._queue_tasks.get(self._queue_of(name), [])
        return next((t for t in tasks if t.name == name), None)

    def _release(self, name: str) -> None:
        # Cloud Tasks refuses the name for a while after the task ran or was deleted.
        self._reserved[name] = time.monotonic() + self._args.name_reuse_seconds

    def _forget_expired(self) -> None:
        now = time.monotonic()
        for name in [n for n, until in self._reserved.items() if until <= now]:
            del self._reserved[name]


class Servicer(base.Greeter):
    _state: State

    @staticmethod
    def _call(context: grpc.ServicerContext, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except GoogleAPICallError as err:
            context.abort(err.grpc_status_code, err.message)

    def GetQueue(self, request: Any, context: grpc.ServicerContext) -> Any:
        if request.name not in self._state.queue_names():
            context.abort(grpc.StatusCode.NOT_FOUND, f"Queue {request.name} does not exist.")
        return self._state.queue(request.name)

    def GetTask(self, request: Any, context: grpc.ServicerContext) -> Any:
        return self._call(context, self._state.get_task, request.name)

    def DeleteTask(self, request: Any, context: grpc.ServicerContext) -> Any:
        self._call(context, self._state.delete_task, request.name)
        return empty_pb2.Empty()

    def RunTask(self, request: Any, context: grpc.ServicerContext) -> Any:
        return self._call(context, self._state.run_task, request.name)


def dispatch_forever(state: State, workers: int) -> None:
    pool = futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="dispatch")
    while True:
        try:
            for task in state.take_due():
                pool.submit(state.attempt, task)
        except Exception:  # keep dispatching whatever one bad pass ran into
            log.exception("dispatch loop")
        time.sleep(0.05)


def keep_across_restarts(state: State, path: str) -> None:
    """Start with the tasks kept at ``path``; write them back a moment after each change,
    and once more when stopped (the stack stops services with SIGTERM)."""
    kept = kept_tasks.load(path)
    state.restore(kept)
    log.info("restored %d task(s) from %s", len(kept.tasks), path)
    kept_file.keep_writing(state.changed, lambda: kept_tasks.save(path, state.snapshot()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--state-dir", required=True, help="holds auth/internal_key.pem")
    parser.add_argument("--queue", action="append", default=[], help="queue path to create")
    parser.add_argument("--max-attempts", type=int, default=5)
    parser.add_argument("--min-backoff", type=float, default=0.5, help="seconds")
    parser.add_argument("--max-backoff", type=float, default=10.0, help="seconds")
    parser.add_argument("--name-reuse-seconds", type=float, default=3600.0)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--keep", help="file the tasks are kept in across restarts")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    state = State(args)
    for queue in args.queue:
        state.create_queue(None, Queue(name=queue))
    if args.keep:
        keep_across_restarts(state, args.keep)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    add_CloudTasksServicer_to_server(Servicer(state), server)
    if not server.add_insecure_port(f"{HOST}:{args.port}"):
        raise SystemExit(f"cannot bind {HOST}:{args.port}")
    server.start()
    log.info("Cloud Tasks emulator on %s:%s, queues %s", HOST, args.port, args.queue)
    dispatch_forever(state, args.workers)


if __name__ == "__main__":
    main()
