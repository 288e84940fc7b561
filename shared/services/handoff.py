"""Background work handed off by a turn: fact extraction (Cloud Tasks), agent jobs (Pub/Sub)."""

from __future__ import annotations

from shared.deps import Deps
from shared.graph.state import TurnState
from shared.models.domain import AgentJob, ExtractionTask, Message
from shared.ports import QueuedTask
from shared.services.ids import extraction_task_name, job_id_for


def enqueue_extraction(
    deps: Deps, user_id: str, chat_id: str, message: Message, state: TurnState
) -> bool:
    """Enqueue extraction when the classifier saw facts; False if nothing was enqueued."""
    intent = state.intent
    if intent is None or not intent.has_extractable_facts or message.turn_id is None:
        return False
    task = ExtractionTask(
        user_id=user_id,
        chat_id=chat_id,
        turn_id=message.turn_id,
        message_id=message.id,
        text=message.text,
        has_preferences=intent.has_preferences,
        enqueued_at=deps.clock.now(),
    )
    settings = deps.settings
    deps.tasks.enqueue(
        QueuedTask(
            queue=settings.extraction_queue,
            url=settings.extraction_url,
            name=extraction_task_name(message.turn_id),
            body=task.model_dump_json().encode(),
        )
    )
    return True


def publish_jobs(deps: Deps, user_id: str, chat_id: str, turn_id: str, state: TurnState) -> int:
    now = deps.clock.now()
    for step, planned in enumerate(state.planning.jobs):
        job = AgentJob(
            job_id=job_id_for(turn_id, step),
            user_id=user_id,
            chat_id=chat_id,
            turn_id=turn_id,
            agent=planned.agent,
            goal=planned.goal,
            created_at=now,
        )
        deps.publisher.publish(
            deps.settings.agents_topic, job.model_dump_json().encode(), {"job_id": job.job_id}
        )
    return len(state.planning.jobs)
