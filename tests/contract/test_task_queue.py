"""TaskQueue contract: the fake and Cloud Tasks (the stack's emulator) behave the same."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared.adapters.cloud_tasks import task_id
from shared.ports import QueuedTask
from tests.contract.conftest import QueueBackend, unique

# Far in the future: the emulator must not try to deliver during the test.
LATER = datetime.now(UTC) + timedelta(days=1)


def task(backend: QueueBackend, name: str) -> QueuedTask:
    return QueuedTask(
        queue=backend.queue_name,
        url="http://127.0.0.1:9/extract",
        name=name,
        body=b'{"user_id": "u1"}',
        schedule_time=LATER,
    )


def test_a_new_name_is_queued(queue_backend: QueueBackend) -> None:
    assert queue_backend.queue.enqueue(task(queue_backend, unique("t"))) is True


def test_a_reused_name_is_rejected(queue_backend: QueueBackend) -> None:
    name = unique("extract")
    assert queue_backend.queue.enqueue(task(queue_backend, name)) is True
    assert queue_backend.queue.enqueue(task(queue_backend, name)) is False
    assert queue_backend.queue.enqueue(task(queue_backend, name + "-2")) is True


def test_names_outside_the_task_id_alphabet_stay_distinct(queue_backend: QueueBackend) -> None:
    base = unique("turn")
    assert queue_backend.queue.enqueue(task(queue_backend, f"{base}:a.b")) is True
    assert queue_backend.queue.enqueue(task(queue_backend, f"{base}:a_b")) is True
    assert queue_backend.queue.enqueue(task(queue_backend, f"{base}:a.b")) is False


def test_task_ids_are_valid_and_collision_free() -> None:
    assert task_id("plain_name-1") == "plain_name-1"
    dotted, underscored = task_id("a.b"), task_id("a_b")
    assert dotted != underscored and dotted.startswith("a_b-")
    long_id = task_id("x" * 600)
    assert len(long_id) <= 500 and long_id != task_id("x" * 601)
