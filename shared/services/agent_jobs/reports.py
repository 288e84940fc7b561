"""What a job tells the chat: progress as subtasks finish, then one final message.

Message ids derive from the job (``{job}-{subtask}`` for progress, ``{job}-result`` for the
end, ``{job}-stalled`` for an outage notice, ``{job}-expired`` for a job delivered too late
to run; their kinds ``progress``, ``result`` and
``notice``) and ``append_message`` is idempotent on the id, so a redelivered or resumed job
never posts anything twice. A chat deleted meanwhile gets nothing (logged).
"""

from __future__ import annotations

import logging

from shared.errors import NotFound
from shared.models.agent_data import WebSource, https_sources
from shared.models.domain import Message
from shared.models.jobs import AgentJob, JobState, SubtaskState
from shared.models.wire import MessageKind
from shared.services.agent_jobs import jobstate
from shared.services.agent_jobs.needs import ChatPorts

log = logging.getLogger("agents")
PROGRESS_CHARS = 600

_REASONS = {
    "abort": "too many parts failed",
    "budget": "it used up its budget",
    "required": "an action it needs was not approved",
}


def progress(deps: ChatPorts, state: JobState, subtask_id: str, result: str) -> None:
    done = sum(1 for s in state.subtasks if s.status == "done") + 1
    goal = state.subtask(subtask_id).subtask.goal
    text = f"Progress ({done}/{len(state.subtasks)}): {goal}\n{_short(result)}"
    _post(deps, state.job, f"{state.job.job_id}-{subtask_id}", "progress", text)


RESULT_SUFFIX = "-result"  # of the job's final message id: what the user reacts to


def final(deps: ChatPorts, state: JobState) -> None:
    """The job's answer, with the web sources its results rest on and the search
    suggestions Google requires beside a grounded answer."""
    finished = jobstate.final_results(state) if state.status == "done" else []
    pairs = [(s.title, s.uri) for sub in finished for s in sub.sources]
    html = next((s.search_suggestions_html for s in finished if s.search_suggestions_html), "")
    message_id = f"{state.job.job_id}{RESULT_SUFFIX}"
    _post(deps, state.job, message_id, "result", final_text(state), https_sources(pairs), html)


def stalled(deps: ChatPorts, state: JobState) -> None:
    text = (
        f"I could not finish “{_goal(state)}”: a service I need stayed unavailable. "
        "An operator has been told; what was done so far is kept."
    )
    _post(deps, state.job, f"{state.job.job_id}-stalled", "notice", text)


def expired(deps: ChatPorts, job: AgentJob) -> None:
    """A job delivered after ``max_event_age_seconds`` is not run: its result would come
    too late to be what the user asked for, and a turn said it had started. So they hear."""
    goal = job.goal or (job.subtasks[0].goal if job.subtasks else "your request")
    verb = "continue" if job.resume is not None else "start on"
    text = (
        f"I could not {verb} “{goal}”: it waited too long before it could run. "
        "Ask me again if you still need it."
    )
    _post(deps, job, f"{job.job_id}-expired", "notice", text)


def final_text(state: JobState) -> str:
    finished = jobstate.final_results(state)
    failed = jobstate.failed(state)
    if state.status == "done":
        if len(finished) == 1:  # one subtask, or one that sums the others up
            body = finished[0].result
        else:
            body = "\n\n".join(_section(s) for s in finished) or "Nothing came of it."
        return body + _failures(failed, len(state.subtasks))
    if state.status == "cancelled":
        head = f"Stopped working on “{_goal(state)}”, as you asked."
    else:
        reason = _REASONS.get(state.outcome, state.outcome or "it could not go on")
        head = f"I stopped working on “{_goal(state)}”: {reason}."
    done = [s for s in state.subtasks if s.status == "done"]
    kept = "".join(f"\n\n{_section(s)}" for s in done)
    return head + kept + _failures(failed, len(state.subtasks))


def _section(subtask: SubtaskState) -> str:
    return f"{subtask.subtask.goal}:\n{subtask.result}"


def _failures(failed: list[SubtaskState], total: int) -> str:
    if not failed:
        return ""
    lines = "\n".join(f"- {s.subtask.goal} ({s.error.split(':', 1)[0]})" for s in failed)
    return f"\n\n{len(failed)} of {total} parts failed:\n{lines}"


def _goal(state: JobState) -> str:
    return state.job.goal or state.subtasks[0].subtask.goal


def _short(text: str) -> str:
    return text if len(text) <= PROGRESS_CHARS else text[: PROGRESS_CHARS - 1] + "…"


def _post(
    deps: ChatPorts,
    job: AgentJob,
    message_id: str,
    kind: MessageKind,
    text: str,
    sources: list[WebSource] | None = None,
    suggestions_html: str = "",
) -> None:
    message = Message(
        id=message_id,
        role="assistant",
        text=text,
        created_at=deps.clock.now(),
        turn_id=job.turn_id,
        sources=sources or [],
        search_suggestions_html=suggestions_html,
        kind=kind,
    )
    try:
        deps.conversations.append_message(job.user_id, job.chat_id, message)
    except NotFound:
        log.warning("job's chat is gone", extra={"job_id": job.job_id})
