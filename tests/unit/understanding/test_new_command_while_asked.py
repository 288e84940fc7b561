"""A whole new command typed while an approval waits is the user's next request, not the
waiting step's new goal (shared/app/resume.py); words that change the step still are."""

from __future__ import annotations

import pytest

from shared.app.resume import ResumeService
from shared.app.turn import TurnService
from shared.deps import Deps
from shared.errors import BadRequest
from shared.fakes.clock import FixedClock
from shared.models.domain import AssistantProfile
from shared.models.wire import ResumeRequest
from shared.understanding import UnderstandingTier
from tests.unit.turn_kit import request
from tests.unit.understanding.conftest import ZONE, with_tier


@pytest.fixture
def wired(deps: Deps, tier: UnderstandingTier, clock: FixedClock) -> Deps:
    wired = with_tier(deps, tier)
    wired.profiles.put_profile("alice", AssistantProfile(timezone=ZONE), clock.now())
    return wired


def _asked(deps: Deps) -> ResumeRequest:
    asked = TurnService(deps).run("alice", request("note that the wifi password is sole2024"))
    assert asked.interrupt is not None and asked.interrupt.kind == "approval"
    return ResumeRequest(chat_id=asked.chat_id, interrupt_id=asked.interrupt.id, answer="1")


@pytest.mark.parametrize(
    "command",
    [
        "put dinner with Anna in my calendar on Friday at 7pm",
        "remind me to call Rosa tomorrow at 10am",
        "I spent 12 CHF on coffee",
    ],
)
def test_a_new_command_is_refused_as_an_answer(wired: Deps, command: str) -> None:
    pending = _asked(wired)
    service = ResumeService(wired)
    with pytest.raises(BadRequest):
        service.prepare("alice", pending.model_copy(update={"answer": command}))
    assert wired.publisher.messages == []  # type: ignore[attr-defined]  # nothing ran
    # the approval still waits, and its own answer still works
    answered = service.turns.run_prepared(service.prepare("alice", pending))
    assert answered.jobs and len(wired.publisher.messages) == 1  # type: ignore[attr-defined]


def test_words_that_change_the_step_still_edit_it(wired: Deps) -> None:
    pending = _asked(wired)
    edit = pending.model_copy(update={"answer": "make it sole2025 instead"})
    service = ResumeService(wired)
    answered = service.turns.run_prepared(service.prepare("alice", edit))
    assert "make it sole2025 instead" in answered.reply.text  # the step's goal, as rewritten
