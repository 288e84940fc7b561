"""The user's answer to a job's question continues the job: a continuation message.

``functions/resume`` (the answer) and the approval timeout call ``continue_job`` after they
claimed the chat's interrupt. It publishes the job again with ``resume`` set; the runner
claims ``job id + interrupt id`` once (``claims``), so publishing twice, or a redelivery,
runs nothing twice, and the order of messages does not matter.
"""

from __future__ import annotations

from typing import Literal

from shared.deps import Deps
from shared.errors import NotFound
from shared.models.jobs import JobResume
from shared.services import handoff


def continue_job(
    deps: Deps,
    user_id: str,
    chat_id: str,
    job_id: str,
    interrupt_id: str,
    option_id: str,
    source: Literal["user", "timeout"],
    answer: str = "",
    trace: str | None = None,
) -> None:
    """Publish the answer to the job's interrupt; ``NotFound`` if the user has no such job
    in that chat. ``answer`` is the free text of a clarification."""
    state = deps.jobs.get(user_id, job_id)
    if state is None or state.job.chat_id != chat_id:
        raise NotFound("no such job")
    resume = JobResume(
        interrupt_id=interrupt_id, option_id=option_id, source=source, answer=answer[:2000]
    )
    message = state.job.model_copy(update={"resume": resume, "created_at": deps.clock.now()})
    handoff.publish_jobs(deps.settings, deps.publisher, [message], trace)
