"""The user's agent jobs (``/v1/jobs...``): list (active and recent: a finished job stays
until its TTL), get, and the custom methods ``:pause``, ``:resume``, ``:cancel`` (each
answers the job) and ``:takeover`` (cancels it and answers where every part of it stands).
Another user's job is simply not found."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from shared.app import agent_control
from shared.app.api_call import ApiCall, cut_page, page_start
from shared.errors import NotFound
from shared.models.base import Strict
from shared.models.chat_api import JobPage, JobResource, JobSubtask
from shared.models.jobs import JobState
from shared.models.wire import CLIENT_ID_PATTERN
from shared.rest.paging import PageQuery, scope_of

JOBS_PAGE = (20, 100)  # default and maximum page size


def job_resource(state: JobState) -> JobResource:
    return JobResource(
        id=state.job.job_id,
        chat_id=state.job.chat_id,
        goal=state.job.goal,
        status=state.status,
        control=state.control,
        subtasks=[
            JobSubtask(
                id=s.subtask.id,
                agent=s.subtask.agent,
                goal=s.subtask.goal,
                status=s.status,
                result=s.result,
            )
            for s in state.subtasks
        ],
        outcome=state.outcome,
        created_at=state.created_at,
        updated_at=state.updated_at,
    )


def list_jobs(call: ApiCall) -> JobPage:
    page = call.query(PageQuery)
    scope, size = scope_of("jobs"), page.size(*JOBS_PAGE)
    found = call.deps.jobs.list_jobs(call.user_id, size + 1, page_start(call, scope, page))
    shown, token = cut_page(call, scope, size, found, lambda s: (s.updated_at, s.job.job_id))
    return JobPage(jobs=[job_resource(state) for state in shown], next_page_token=token)


def read(call: ApiCall) -> JobResource:
    state = call.deps.jobs.get(call.user_id, _job_id(call))
    if state is None:
        raise NotFound("no such job")
    return job_resource(state)


class JobCommand(Strict):
    """A custom method's body: nothing (``{}`` or empty)."""


def act(command: Callable[..., JobState]) -> Callable[[ApiCall], BaseModel]:
    """A custom method that changes the job and answers it."""

    def run(call: ApiCall) -> BaseModel:
        call.body(JobCommand)
        return job_resource(command(call.deps, call.user_id, _job_id(call)))

    return run


def take_over(call: ApiCall) -> BaseModel:
    call.body(JobCommand)
    return agent_control.takeover(call.deps, call.user_id, _job_id(call))


VERBS: dict[str, Callable[[ApiCall], BaseModel]] = {
    "pause": act(agent_control.pause),
    "resume": act(agent_control.resume),
    "cancel": act(agent_control.cancel),
    "takeover": take_over,
}


def _job_id(call: ApiCall) -> str:
    return call.id("job", CLIENT_ID_PATTERN)
