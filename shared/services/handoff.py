"""Background work handed off by a turn: fact extraction (Cloud Tasks), agent jobs (Pub/Sub),
an approval's timeout (Cloud Tasks).

Idempotent by name: the extraction task is named from the turn that received the message
(a deferred one from the turn that asked the question), agent jobs from the turn and the
step, a timeout from its interrupt; so a retried turn, a double click or a drained outbox
re-sends the same names, and a second send has no effect.

A queue that is down does not fail the turn: ``send`` returns what it could not send, the
turn keeps it in its record's outbox, and the outbox is drained later (the chat's next turn,
or the scheduled drain).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from shared.config import Settings
from shared.errors import DependencyUnavailable
from shared.models.domain import ExtractionTask, Handoff
from shared.models.jobs import AgentJob
from shared.ports import Publisher, QueuedTask, TaskQueue
from shared.services.ids import answer_task_name, extraction_task_name, summary_task_name

log = logging.getLogger("handoff")


def extraction_handoffs(
    settings: Settings, pending: Sequence[ExtractionTask], trace: str | None
) -> list[Handoff]:
    return [
        Handoff(
            kind="task",
            name=extraction_handoff_name(task),
            queue=settings.extraction_queue,
            url=settings.extraction_url,
            body=task.model_dump_json(),
            attributes=_trace_header(trace),
        )
        for task in pending
    ]


def extraction_handoff_name(task: ExtractionTask) -> str:
    if task.settles is not None:
        return answer_task_name(task.turn_id)
    return (extraction_task_name if task.facts else summary_task_name)(task.turn_id)


def job_handoffs(settings: Settings, jobs: Sequence[AgentJob], trace: str | None) -> list[Handoff]:
    return [
        Handoff(
            kind="message",
            name=job.job_id,
            queue=settings.agents_topic,
            body=job.model_dump_json(),
            attributes={"job_id": job.job_id, **({"trace": trace} if trace else {})},
        )
        for job in jobs
    ]


def task_handoff(task: QueuedTask) -> Handoff:
    return Handoff(
        kind="task",
        name=task.name,
        queue=task.queue,
        url=task.url,
        body=task.body.decode(),
        attributes=task.headers,
        schedule_time=task.schedule_time,
    )


def send(tasks: TaskQueue, publisher: Publisher, handoffs: Sequence[Handoff]) -> list[Handoff]:
    """Send each; return those a queue could not take (its outage), in order."""
    unsent: list[Handoff] = []
    for handoff in handoffs:
        try:
            _send_one(tasks, publisher, handoff)
        except DependencyUnavailable as error:
            log.warning(
                "handoff kept for later: queue unavailable",
                extra={"handoff": handoff.name, "kind": handoff.kind, "error": error.message},
            )
            unsent.append(handoff)
    return unsent


def publish_jobs(
    settings: Settings, publisher: Publisher, jobs: Sequence[AgentJob], trace: str | None
) -> int:
    """Publish now, failing with the queue (for callers that answer 503 and are retried)."""
    for handoff in job_handoffs(settings, jobs, trace):
        _publish(publisher, handoff)
    return len(jobs)


def _send_one(tasks: TaskQueue, publisher: Publisher, handoff: Handoff) -> None:
    if handoff.kind == "message":
        _publish(publisher, handoff)
        return
    tasks.enqueue(  # False: a task of that name exists already, which is what we want
        QueuedTask(
            queue=handoff.queue,
            url=handoff.url,
            name=handoff.name,
            body=handoff.body.encode(),
            schedule_time=handoff.schedule_time,
            headers=handoff.attributes,
        )
    )


def _publish(publisher: Publisher, handoff: Handoff) -> None:
    publisher.publish(handoff.queue, handoff.body.encode(), handoff.attributes)


def _trace_header(trace: str | None) -> dict[str, str]:
    return {"X-Cloud-Trace-Context": trace} if trace else {}
