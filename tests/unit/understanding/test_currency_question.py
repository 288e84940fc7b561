"""An expense with no currency said or set: the approval asks which currency, the answer
fills the call and becomes the profile's currency (shared/graph/choices.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from shared.app.agent_delivery import AgentJobService
from shared.app.resume import ResumeService
from shared.app.turn import TurnService
from shared.deps import Deps
from shared.errors import BadRequest, InterruptNotPending
from shared.fakes.clock import FixedClock
from shared.fakes.scripted_llm import ScriptedLLM
from shared.models.agent_data import Expense
from shared.models.domain import AssistantProfile
from shared.models.jobs import AgentJob
from shared.models.wire import Interrupt, ResumeRequest
from shared.understanding import UnderstandingTier
from tests.unit.turn_kit import request
from tests.unit.understanding.conftest import with_tier


@pytest.fixture
def wired(deps: Deps, tier: UnderstandingTier, clock: FixedClock) -> Deps:
    """A trusted user in Zurich who has set no currency: only the currency is asked."""
    wired = with_tier(deps, tier)
    wired.profiles.put_profile("alice", AssistantProfile(timezone="Europe/Zurich"), clock.now())
    wired.trust.update(
        "alice", lambda r: r.model_copy(update={"pinned_mode": "human_on_the_loop"}), clock.now()
    )
    return wired


def _asked(deps: Deps) -> tuple[Interrupt, str]:
    response = TurnService(deps).run("alice", request("I spent 42.50 on groceries"))
    assert response.interrupt is not None
    return response.interrupt, response.chat_id


def _recorded(deps: Deps, clock: FixedClock) -> list[Expense]:
    jobs = AgentJobService(deps, sleep=lambda _: None, rand=lambda: 0.5)
    for message in deps.publisher.messages:  # type: ignore[attr-defined]
        jobs.run(AgentJob.model_validate_json(message.data), f"push-{message.data[-8:]!r}")
    since = clock.now() - timedelta(days=1)
    return deps.agent_data.list_expenses("alice", since, clock.now() + timedelta(days=1), 10)


def test_the_currency_is_asked_with_the_users_countrys_first(wired: Deps, llm: ScriptedLLM) -> None:
    asked, _ = _asked(wired)
    assert asked.kind == "approval" and "currency" in asked.question
    assert [o.id for o in asked.options] == [
        "choose:CHF", "choose:USD", "choose:EUR", "choose:GBP", "reject", "edit"
    ]  # fmt: skip
    assert asked.options[0].label == "CHF (Swiss Franc)"
    assert llm.calls == []  # neither a classification nor a planner call


@pytest.mark.parametrize(("answer", "currency"), [("chf", "CHF"), ("2", "USD"), ("euro", "EUR")])
def test_the_answer_fills_the_call_and_becomes_the_profiles_currency(
    wired: Deps, clock: FixedClock, answer: str, currency: str
) -> None:
    _, chat = _asked(wired)
    TurnService(wired).run("alice", request(answer, cmid="m2", chat_id=chat))
    [expense] = _recorded(wired, clock)
    assert (expense.amount_minor, expense.currency, expense.category) == (
        4250, currency, "groceries"
    )  # fmt: skip
    assert wired.profiles.get_profile("alice").currency == currency


def test_the_next_expense_is_not_asked_about(wired: Deps, clock: FixedClock) -> None:
    _, chat = _asked(wired)
    TurnService(wired).run("alice", request("chf", cmid="m2", chat_id=chat))
    later = TurnService(wired).run("alice", request("I spent 12 on coffee", "m3", chat))
    assert later.interrupt is None
    assert sorted(e.amount_minor for e in _recorded(wired, clock)) == [1200, 4250]


def test_no_records_nothing_and_keeps_no_currency(wired: Deps, clock: FixedClock) -> None:
    _, chat = _asked(wired)
    TurnService(wired).run("alice", request("no", cmid="m2", chat_id=chat))
    assert _recorded(wired, clock) == []
    assert wired.profiles.get_profile("alice").currency is None


def test_answered_through_resume_by_option_id(wired: Deps, clock: FixedClock) -> None:
    asked, chat = _asked(wired)
    service = ResumeService(wired)
    answer = ResumeRequest(chat_id=chat, interrupt_id=asked.id, answer="choose:GBP")
    service.turns.run_prepared(service.prepare("alice", answer))
    [expense] = _recorded(wired, clock)
    assert expense.currency == "GBP"


def test_a_currency_said_or_set_is_never_asked(wired: Deps, clock: FixedClock) -> None:
    response = TurnService(wired).run("alice", request("I spent 30 EUR on books"))
    assert response.interrupt is None
    assert [e.currency for e in _recorded(wired, clock)] == ["EUR"]
    assert wired.profiles.get_profile("alice").currency is None  # said once, not a setting


@pytest.mark.parametrize("answer", ["choose:JPY", "choose:", "choose:chf", "JPY"])
def test_a_value_never_offered_is_refused_and_changes_nothing(
    wired: Deps, clock: FixedClock, answer: str
) -> None:
    asked, chat = _asked(wired)
    with pytest.raises(BadRequest):
        ResumeService(wired).prepare(
            "alice", ResumeRequest(chat_id=chat, interrupt_id=asked.id, answer=answer)
        )
    assert _recorded(wired, clock) == []
    assert wired.profiles.get_profile("alice").currency is None
    # The question is still open: the offered value still answers it.
    service = ResumeService(wired)
    picked = ResumeRequest(chat_id=chat, interrupt_id=asked.id, answer="choose:CHF")
    service.turns.run_prepared(service.prepare("alice", picked))
    assert [e.currency for e in _recorded(wired, clock)] == ["CHF"]


def test_a_double_tap_records_the_expense_once(wired: Deps, clock: FixedClock) -> None:
    asked, chat = _asked(wired)
    service = ResumeService(wired)
    answer = ResumeRequest(chat_id=chat, interrupt_id=asked.id, answer="choose:EUR")
    service.turns.run_prepared(service.prepare("alice", answer))
    with pytest.raises(InterruptNotPending):
        service.prepare("alice", answer)
    with pytest.raises(InterruptNotPending):  # another value after the first: too late
        service.prepare("alice", answer.model_copy(update={"answer": "choose:USD"}))
    assert [e.currency for e in _recorded(wired, clock)] == ["EUR"]
    assert wired.profiles.get_profile("alice").currency == "EUR"
