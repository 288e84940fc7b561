""" "how much did i spend this wk" on the real stores (Firestore emulator, PostgreSQL, Redis)
with the understanding tier: the expenses recorded in Firestore are read in the turn and
said back per currency as recorded; no model is called, nothing is asked, no job starts
(make dev: the question started a budget research job)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from shared.adapters import model_guard
from shared.adapters.local_embedder import LocalEmbedder
from shared.app.turn import TurnService
from shared.config import Settings
from shared.deps import Deps
from shared.fakes.clock import FixedClock
from shared.fakes.scripted_llm import HashEmbedder, ScriptedLLM
from shared.models.agent_data import Expense
from shared.models.domain import AssistantProfile
from shared.understanding import UnderstandingTier
from tests.unit.turn_kit import request

pytestmark = [pytest.mark.stack, pytest.mark.usefixtures("stack_env")]
NOW = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)  # Saturday; the week is Mon 23 - Sun 29


@pytest.fixture
def user() -> str:
    return f"u{uuid.uuid4().hex[:12]}"


@pytest.fixture
def wired(user: str) -> Iterator[tuple[Deps, ScriptedLLM]]:
    settings = Settings(model_provider="scripted", speculative_reply=False)
    llm = ScriptedLLM()  # it has no reply: a model call would fail the turn
    with model_guard.override_allow_model_requests(True):  # MiniLM, in this process
        tier = UnderstandingTier(LocalEmbedder())
        tier.load()
        deps = Deps(
            settings,
            llm=llm,
            embedder=HashEmbedder(settings.embedding_dimension),
            clock=FixedClock(NOW),
            understanding=tier,
        )
        yield deps, llm
    deps.account_conversations.delete_user(user)
    deps.close()


def test_a_spending_question_is_answered_from_the_recorded_expenses(
    wired: tuple[Deps, ScriptedLLM], user: str
) -> None:
    deps, llm = wired
    deps.profiles.put_profile(user, AssistantProfile(timezone="Europe/Zurich"), NOW)  # no currency
    spent = [(1250, "EUR", 5), (3000, "EUR", 1), (900, "USD", 0), (9900, "EUR", 6)]
    for n, (minor, currency, days_ago) in enumerate(spent):
        at = NOW - timedelta(days=days_ago)  # six days ago: Sunday 22, last week
        expense = Expense(id=f"e{n}", amount_minor=minor, currency=currency,
                          category="restaurants", spent_at=at, created_at=at)  # fmt: skip
        deps.agent_data.put_expense(user, expense)

    reply = TurnService(deps).run(user, request("how much did i spend this wk"))

    said = "This week (Mon 23 - Sun 29 Nov) you recorded 3 expenses: 42.50 EUR and 9.00 USD."
    assert (reply.reply.text, reply.interrupt, reply.jobs, llm.calls) == (said, None, [], [])
    turn = deps.conversations.get_turn(user, "m1")
    assert turn is not None and turn.status == "done"
    assert deps.conversations.outbox(user, "m1") == []  # no handoff waits to be sent either
