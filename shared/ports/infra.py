"""The platform's ports: a clock, the task queue, Pub/Sub, a cache, idempotency keys, operator
alerts; and keyset paging."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from pydantic import Field

from shared.models.base import Strict

# A list's position: the ``(time, id)`` of the last item a page gave (keyset paging).
Keyset = tuple[datetime, str]


class Clock(Protocol):
    def now(self) -> datetime: ...


class IdempotencyStore(Protocol):
    def claim(self, key: str, now: datetime, ttl_seconds: int) -> bool:
        """True for the first caller of ``key``; False for every later one."""
        ...

    def release(self, key: str) -> None:
        """Give up a claim whose work failed transiently, so a redelivery may retry it."""
        ...


class Cache(Protocol):
    def get(self, key: str) -> bytes | None: ...

    def set(self, key: str, value: bytes, ttl_seconds: int) -> None: ...

    def delete(self, *keys: str) -> None: ...

    def hit(self, key: str, window_seconds: int) -> int:
        """Count one event in a fixed window and return the count so far."""
        ...


class QueuedTask(Strict):
    queue: str
    url: str
    name: str  # Cloud Tasks deduplicates by name
    body: bytes
    schedule_time: datetime | None = None
    headers: dict[str, str] = Field(
        default_factory=dict
    )  # e.g. the request's trace, so the task's logs join it


class TaskQueue(Protocol):
    def enqueue(self, task: QueuedTask) -> bool:
        """Create the task; False when a task of that name already exists."""
        ...


class Publisher(Protocol):
    def publish(self, topic: str, data: bytes, attributes: dict[str, str]) -> str:
        """Publish and return the message id."""
        ...


class OperatorAlerts(Protocol):
    """The operators' channel (a webhook) for what a person must look at."""

    def alert(self, event: str, payload: dict[str, Any]) -> bool:
        """Deliver once, best effort: False (logged) when no channel is set or it failed."""
        ...
