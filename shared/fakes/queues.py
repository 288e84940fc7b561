"""In-memory ``TaskQueue`` and ``Publisher`` that record what was sent."""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass

from shared.ports import QueuedTask


class FakeTaskQueue:
    """Rejects a reused task name, as Cloud Tasks does."""

    def __init__(self) -> None:
        self.tasks: list[QueuedTask] = []
        self._names: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def enqueue(self, task: QueuedTask) -> bool:
        with self._lock:
            if (task.queue, task.name) in self._names:
                return False
            self._names.add((task.queue, task.name))
            self.tasks.append(task)
        return True


@dataclass(frozen=True)
class PublishedMessage:
    message_id: str
    topic: str
    data: bytes
    attributes: dict[str, str]


class FakePublisher:
    def __init__(self) -> None:
        self.messages: list[PublishedMessage] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def publish(self, topic: str, data: bytes, attributes: dict[str, str]) -> str:
        with self._lock:
            message_id = str(next(self._ids))
            self.messages.append(PublishedMessage(message_id, topic, data, dict(attributes)))
        return message_id
