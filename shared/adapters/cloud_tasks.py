"""``TaskQueue`` on Cloud Tasks: authenticated HTTP POST tasks, deduplicated by task name."""

from __future__ import annotations

import hashlib
import re
from contextlib import nullcontext

import grpc
from google.api_core import exceptions as gexc
from google.cloud import tasks_v2
from google.cloud.tasks_v2.services.cloud_tasks.transports import CloudTasksGrpcTransport

from shared.adapters.breaker import CircuitBreaker
from shared.adapters.gcp_errors import transient_as_unavailable
from shared.config import Settings
from shared.ports import QueuedTask

_TASK_ID = re.compile(r"^[A-Za-z0-9_-]{1,500}$")
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")


def task_id(name: str) -> str:
    """A valid Cloud Tasks id for ``name``: itself when already valid; otherwise the cleaned
    name plus a hash of the original, so two different names never share an id."""
    if _TASK_ID.match(name):
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:32]
    return f"{_NOT_ALLOWED.sub('_', name)[:400]}-{digest}"


def build_tasks_client(settings: Settings) -> tasks_v2.CloudTasksClient:
    if settings.cloud_tasks_emulator_host:
        channel = grpc.insecure_channel(settings.cloud_tasks_emulator_host)
        return tasks_v2.CloudTasksClient(transport=CloudTasksGrpcTransport(channel=channel))
    return tasks_v2.CloudTasksClient()


class CloudTasksTaskQueue:
    def __init__(
        self,
        client: tasks_v2.CloudTasksClient,
        project: str,
        location: str,
        oidc_service_account_email: str,
        timeout: float = 10.0,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        self._breaker = breaker
        self._client = client
        self._project = project
        self._location = location
        self._invoker = oidc_service_account_email
        self._timeout = timeout

    def enqueue(self, task: QueuedTask) -> bool:
        parent = self._client.queue_path(self._project, self._location, task.queue)
        request = tasks_v2.Task(
            name=f"{parent}/tasks/{task_id(task.name)}",
            http_request=tasks_v2.HttpRequest(
                http_method=tasks_v2.HttpMethod.POST,
                url=task.url,
                headers={**task.headers, "Content-Type": "application/json"},
                body=task.body,
                oidc_token=tasks_v2.OidcToken(
                    service_account_email=self._invoker, audience=task.url
                ),
            ),
            schedule_time=task.schedule_time,
        )
        guard = self._breaker.guard() if self._breaker else nullcontext()
        with guard, transient_as_unavailable("cloud tasks"):
            try:
                self._client.create_task(parent=parent, task=request, timeout=self._timeout)
            except gexc.AlreadyExists:
                return False
        return True
