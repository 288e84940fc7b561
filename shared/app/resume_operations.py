"""The resume function's JSON operations besides answering: a chat's poll, and the user's
requests about a running agent job.

``/messages``: what arrived in a chat after a time, and the question it waits on.
``/chats``: the user's chats, most recently active first.

``pause``/``resume``/``cancel`` answer the job's status (and the request a running job sees
before its next step); ``takeover`` cancels it and answers its context: every subtask with
its result or where it stopped, and the team's messages.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from shared.app import agent_control
from shared.app.chat_view import chat_list, chat_messages
from shared.deps import Deps
from shared.errors import NotFound
from shared.models.jobs import JobState
from shared.models.wire import (
    ChatListRequest,
    ChatMessagesRequest,
    JobRequest,
    JobStatusResponse,
)
from shared.web import parse_json


def _status(state: JobState) -> JobStatusResponse:
    return JobStatusResponse(job_id=state.job.job_id, status=state.status, control=state.control)


JOB_OPERATIONS: dict[str, Callable[[Deps, str, JobRequest], BaseModel]] = {
    "/jobs/pause": lambda d, u, r: _status(agent_control.pause(d, u, r.job_id)),
    "/jobs/resume": lambda d, u, r: _status(agent_control.resume(d, u, r.job_id)),
    "/jobs/cancel": lambda d, u, r: _status(agent_control.cancel(d, u, r.job_id)),
    "/jobs/takeover": lambda d, u, r: agent_control.takeover(d, u, r.job_id),
}


def json_operation(deps: Deps, user_id: str, path: str, body: bytes) -> BaseModel:
    if path == "/messages":
        return chat_messages(deps, user_id, parse_json(body, ChatMessagesRequest))
    if path == "/chats":  # an empty body lists with the defaults
        return chat_list(deps, user_id, parse_json(body or b"{}", ChatListRequest))
    operation = JOB_OPERATIONS.get(path)
    if operation is None:
        raise NotFound(f"no operation at {path!r}; see docs/openapi.yaml")
    return operation(deps, user_id, parse_json(body, JobRequest))
