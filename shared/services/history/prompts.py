"""What the planner's prompt gains from history: a similar plan that worked, as an example,
and similar plans that failed, as warnings ("last time, X failed because Y")."""

from __future__ import annotations

from shared.models.history import Advice, Execution, PlannedStep

MAX_QUOTED = 300  # characters of a past request in the prompt


def advice_prompt(advice: Advice) -> str:
    """Empty when there is nothing to say; otherwise starts with a blank line."""
    parts = []
    if advice.source == "example" and advice.suggestion is not None:
        past = advice.suggestion
        lesson = f"\n{_because(past)} Plan those parts better." if past.failures else ""
        parts.append(
            f"A similar earlier request of this user, “{_quoted(past.request)}”, was planned "
            f"like this and {_went(past)}; follow it where it fits this request:\n"
            + plan_lines(advice.plan)
            + lesson
        )
    for failed in advice.warnings:
        parts.append(
            f"Warning: last time, for “{_quoted(failed.request)}”, this plan "
            f"{_went(failed)}:\n{plan_lines(failed.plan)}\n{_because(failed)} "
            "Do not plan it the same way."
        )
    return "".join(f"\n\n{part}" for part in parts)


def plan_lines(plan: list[PlannedStep]) -> str:
    return "\n".join(
        f"- {s.id} {s.agent}: {s.goal}"
        + (f" (after {', '.join(s.depends_on)})" if s.depends_on else "")
        for s in plan
    )


def _went(run: Execution) -> str:
    return {
        "done": "worked",
        "partial": "worked in part",
        "aborted": "failed",
        "escalated": "went wrong and had to be escalated to the user",
        "cancelled": "was cancelled",
    }[run.outcome]


def _because(run: Execution) -> str:
    if not run.failures:
        return "The watchdog saw the agents go in circles or off course."
    reasons = "; ".join(
        f"{f.subtask_id} ({f.agent}) failed because {f.error or 'it gave no result'}"
        for f in run.failures
    )
    return f"What failed: {reasons}."


def _quoted(text: str) -> str:
    return text if len(text) <= MAX_QUOTED else text[: MAX_QUOTED - 1] + "…"
