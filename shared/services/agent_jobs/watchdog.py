"""The watchdog: every N steps of an agent, a cheap look at its recent steps.

Verdicts: OK, SPIRALING (the same approach three or more times without progress), DRIFT
(the work left the task), STALLING (steps without meaningful output), SHALLOW (a weighty
decision without reasoning). A deterministic check comes first: the same tool with the same
arguments three times in the window, always with the same result, is SPIRALING without a
model call. Otherwise one small structured call decides, told to answer OK unless the
pattern is clear; a failed or invalid evaluation counts as OK (the watchdog never fails a
job).

The ladder, per subtask: a first detection whispers a correction into the agent's next
step; the same problem at the next evaluation whispers a stronger note; a third pauses the
job and escalates to the user (an interrupt offering resume or abort) and to the operators'
webhook. An OK evaluation resets the ladder. The watchdog never acts for the agent.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from shared.errors import DependencyUnavailable, ModelOutputInvalid
from shared.models.jobs import JobState, StepRecord, Verdict, Whisper
from shared.ports import LLM, ChatTurn, LLMRequest, Usage

log = logging.getLogger("agents.watchdog")
ESCALATE_AT = 3  # the third detection in a row

_SYSTEM = (
    "You supervise an AI agent. Read its goal and its recent steps and classify them: "
    "SPIRALING (the same approach tried three or more times without progress), DRIFT (the "
    "work has left the goal), STALLING (steps without meaningful output), SHALLOW (a "
    "complex decision made without sufficient reasoning), or OK. Be conservative: answer "
    "OK unless one pattern is clearly present. In note, say in one sentence what the agent "
    "should change (empty for OK)."
)
_CORRECTION: dict[str, str] = {
    "SPIRALING": "You have tried the same approach several times without progress. Try "
    "a different approach, or finish with what you have.",
    "DRIFT": "Your recent steps have moved away from your goal. Return to the goal.",
    "STALLING": "Your recent steps produced nothing new. Take a concrete step toward the "
    "goal, or finish with what you have.",
    "SHALLOW": "This decision deserves more careful reasoning: weigh the options before you act.",
}


class WatchdogVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    verdict: Literal["OK", "SPIRALING", "DRIFT", "STALLING", "SHALLOW"]
    note: str = Field(default="", max_length=300)


def due(steps_taken: int, every: int) -> bool:
    return steps_taken > 0 and steps_taken % every == 0


def spiraling(window: Sequence[StepRecord]) -> bool:
    """The same tool call three or more times in the window, always with the same result."""
    calls = Counter((s.tool, s.args) for s in window if s.action == "tool")
    for call, count in calls.items():
        results = {s.result for s in window if s.action == "tool" and (s.tool, s.args) == call}
        if count >= 3 and len(results) == 1:
            return True
    return False


def evaluate(llm: LLM, goal: str, window: Sequence[StepRecord]) -> tuple[Verdict, str, Usage]:
    """The verdict on ``window`` with the correction it suggests, and the tokens spent."""
    if spiraling(window):
        return "SPIRALING", "", Usage()
    steps = "\n".join(
        f"{i}. {s.action} {s.tool} {s.args} {s.text[:200]} -> {s.result[:200]}".strip()
        for i, s in enumerate(window, 1)
    )
    request = LLMRequest(
        kind="watchdog",
        system=_SYSTEM,
        messages=[ChatTurn(role="user", text=f"Goal: {goal}\nRecent steps:\n{steps}")],
        max_output_tokens=120,
        temperature=0.0,
    )
    try:
        verdict, usage = llm.structured(request, WatchdogVerdict)
    except (ModelOutputInvalid, DependencyUnavailable) as exc:
        log.warning("watchdog evaluation skipped", extra={"error": str(exc)})
        return "OK", "", Usage()
    return verdict.verdict, verdict.note.strip(), usage


def whisper_text(verdict: Verdict, level: int, note: str) -> str:
    """The note for ``level`` (1: a correction, 2: stronger, 3: the escalation notice)."""
    kind = "[THINK_DEEPER]" if verdict == "SHALLOW" else "[CORRECTION]"
    advice = note or _CORRECTION.get(verdict, "")
    if level == 1:
        return f"{kind} {advice}"
    if level == 2:
        return (
            f"{kind} Second notice: the problem persists ({verdict}). {advice} Change "
            "your approach now or finish with what you have; otherwise the user is asked."
        )
    return f"[ESCALATION] Still no progress ({verdict}). The job is paused for the user."


def climb(
    state: JobState, subtask_id: str, verdict: Verdict, note: str, now: datetime
) -> tuple[JobState, int]:
    """One rung of the ladder for this verdict: the subtask's new level (0 after an OK) and
    the whisper it gets (the third is the escalation notice, never delivered)."""
    level = 0 if verdict == "OK" else state.subtask(subtask_id).watchdog_level + 1
    subtasks = [
        s.model_copy(update={"watchdog_level": level}) if s.subtask.id == subtask_id else s
        for s in state.subtasks
    ]
    state = state.model_copy(update={"subtasks": subtasks})
    if level == 0:
        return state, 0
    whisper = Whisper(
        subtask_id=subtask_id,
        verdict=verdict,
        level=level,
        text=whisper_text(verdict, level, note),
        at=now,
        delivered=level >= ESCALATE_AT,
    )
    return state.model_copy(update={"whispers": [*state.whispers, whisper]}), level
