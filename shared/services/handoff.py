"""Background work handed off by a turn: fact extraction (Cloud Tasks), agent jobs (Pub/Sub).

Both are idempotent by name: the extraction task is named from the turn that received the
message (a deferred one from the turn that asked the question), agent jobs from the turn
and the step, so a retried turn or a double click re-sends the same names.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.config import Settings
from shared.models.domain import AgentJob, ExtractionTask
from shared.ports import Publisher, QueuedTask, TaskQueue
from shared.services.ids import extraction_task_name, summary_task_name


def enqueue_extractions(
    settings: Settings, tasks: TaskQueue, pending: Sequence[ExtractionTask], trace: str | None
) -> int:
    headers = {"X-Cloud-Trace-Context": trace} if trace else {}
    for task in pending:
        tasks.enqueue(
            QueuedTask(
                queue=settings.extraction_queue,
                url=settings.extraction_url,
                name=(extraction_task_name if task.facts else summary_task_name)(task.turn_id),
                body=task.model_dump_json().encode(),
                headers=headers,
            )
        )
    return len(pending)


def publish_jobs(
    settings: Settings, publisher: Publisher, jobs: Sequence[AgentJob], trace: str | None
) -> int:
    for job in jobs:
        attributes = {"job_id": job.job_id, **({"trace": trace} if trace else {})}
        publisher.publish(settings.agents_topic, job.model_dump_json().encode(), attributes)
    return len(jobs)
