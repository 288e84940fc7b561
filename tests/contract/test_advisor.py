"""The decomposition advisor's scoring on the execution memory, fake and PostgreSQL: a
similar request that worked is reused (adapted, without a planning call), one that failed
is only a warning, a dissimilar one is ignored; feedback lowers a strategy, repeated
success raises it, and age fades it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from shared.config import Settings
from shared.fakes.clock import FixedClock
from shared.fakes.scripted_llm import HashEmbedder
from shared.models.history import SubtaskFailure
from shared.ports import ExecutionMemory
from shared.services.history.advisor import HistoryAdvisor
from tests.contract.conftest import unique
from tests.contract.history_kit import (
    EMBEDDER,
    NOW,
    ExecutionBackend,
    execution,
    execution_backend,
    plan,
)

__all__ = ["execution_backend"]  # the fixture, parametrised over fake and real
SETTINGS = Settings(env="test", model_provider="scripted")
AI_MARKET = "Research the AI agent market"
RPA_MARKET = "Research the RPA market"


@dataclass
class Ports:
    executions: ExecutionMemory
    settings: Settings = SETTINGS
    clock: FixedClock = field(default_factory=lambda: FixedClock(NOW + timedelta(hours=1)))
    embedder: HashEmbedder = EMBEDDER


def advisor(backend: ExecutionBackend, **settings: object) -> HistoryAdvisor:
    return HistoryAdvisor(Ports(backend.store, SETTINGS.model_copy(update=settings)))


def test_a_similar_request_that_worked_is_reused_with_its_parameters_substituted(
    execution_backend: ExecutionBackend,
) -> None:
    user = unique("user")
    worked = execution(
        user, "j1", AI_MARKET, plan=plan("List the AI agent vendors", "Compare AI agent prices")
    )
    execution_backend.store.record(worked, NOW)
    advice = advisor(execution_backend).advise(user, RPA_MARKET, "en")
    assert advice.source == "reused"
    assert advice.confidence is not None and advice.confidence > 0.8
    assert [s.goal for s in advice.plan] == ["List the RPA vendors", "Compare RPA prices"]
    assert advice.plan[1].depends_on == ["s1"]
    assert advice.suggestion is not None and advice.suggestion.job_id == "j1"
    assert advice.warnings == []


def test_a_similar_request_that_failed_is_only_a_warning(
    execution_backend: ExecutionBackend,
) -> None:
    user = unique("user")
    failure = SubtaskFailure(
        subtask_id="s1", agent="research", goal="g", error="step_limit: no answer after 30 steps"
    )
    failed = execution(user, "j1", AI_MARKET, outcome="aborted", failures=[failure])
    execution_backend.store.record(failed, NOW)
    advice = advisor(execution_backend).advise(user, RPA_MARKET, "en")
    assert (advice.source, advice.plan, advice.suggestion) == ("planned", [], None)
    [warning] = advice.warnings
    assert warning.job_id == "j1" and warning.failures[0].error.startswith("step_limit")

    # A success as similar makes an example, never a reuse, while a failure warns.
    worked = execution(user, "j2", AI_MARKET, strategy="other")
    execution_backend.store.record(worked, NOW)
    advice = advisor(execution_backend).advise(user, RPA_MARKET, "en")
    assert advice.source == "example" and [w.job_id for w in advice.warnings] == ["j1"]
    assert advice.suggestion is not None and advice.suggestion.job_id == "j2"


def test_a_run_that_worked_in_part_is_an_example_never_reused(
    execution_backend: ExecutionBackend,
) -> None:
    user = unique("user")
    failure = SubtaskFailure(subtask_id="s2", agent="wealth", goal="g", error="bad: output")
    partial = execution(
        user, "j1", AI_MARKET, outcome="partial", failures=[failure],
        plan=plan("List the AI agent vendors", "Price them"),
    )  # fmt: skip
    execution_backend.store.record(partial, NOW)
    advice = advisor(execution_backend, advisor_reuse_confidence=0.6).advise(user, RPA_MARKET, "en")
    assert advice.source == "example" and advice.warnings == []
    assert advice.confidence is not None and advice.confidence > 0.6


def test_an_escalated_run_warns_like_a_failure(execution_backend: ExecutionBackend) -> None:
    user = unique("user")
    execution_backend.store.record(execution(user, "j1", AI_MARKET, outcome="escalated"), NOW)
    advice = advisor(execution_backend).advise(user, RPA_MARKET, "en")
    assert advice.source == "planned" and [w.outcome for w in advice.warnings] == ["escalated"]


def test_a_dissimilar_request_is_ignored(execution_backend: ExecutionBackend) -> None:
    user = unique("user")
    spending = "Summarize my spending this month"
    execution_backend.store.record(execution(user, "j1", spending), NOW)
    execution_backend.store.record(execution(user, "j2", spending, outcome="aborted"), NOW)
    advice = advisor(execution_backend).advise(user, RPA_MARKET, "en")
    assert (advice.source, advice.suggestion, advice.warnings) == ("planned", None, [])


def test_feedback_lowers_a_strategy_and_repeated_success_raises_it(
    execution_backend: ExecutionBackend,
) -> None:
    user, store = unique("user"), execution_backend.store
    store.record(execution(user, "j1", AI_MARKET, strategy="A"), NOW)
    ask = advisor(execution_backend)
    before = ask.advise(user, RPA_MARKET, "en")
    assert before.source == "reused" and before.confidence is not None
    for key in ("t1", "t2"):  # "that was wrong", twice
        assert ask.feedback(user, key, "wrong", job_id="j1")
    assert not ask.feedback(user, "t2", "wrong", job_id="j1")  # counted once per key
    lowered = ask.advise(user, RPA_MARKET, "en")
    assert lowered.source == "example"  # shown to the planner, no longer reused as is
    assert lowered.confidence is not None and lowered.confidence < before.confidence
    for n in range(2, 6):  # four more runs of the strategy that worked
        store.record(execution(user, f"j{n}", f"Research the {n}G market", strategy="A"), NOW)
    raised = ask.advise(user, RPA_MARKET, "en")
    assert raised.confidence is not None and raised.confidence > lowered.confidence
    assert raised.source == "reused"


def test_an_older_strategy_is_less_confident(execution_backend: ExecutionBackend) -> None:
    fresh, old = unique("user"), unique("user")
    execution_backend.store.record(execution(fresh, "j1", AI_MARKET), NOW)
    aged = execution(old, "j1", AI_MARKET, at=NOW - timedelta(days=90))
    execution_backend.store.record(aged, NOW - timedelta(days=90))
    ask = advisor(execution_backend)
    recent, earlier = ask.advise(fresh, RPA_MARKET, "en"), ask.advise(old, RPA_MARKET, "en")
    assert recent.confidence is not None and earlier.confidence is not None
    assert earlier.confidence < recent.confidence


def test_thresholds_are_settings(execution_backend: ExecutionBackend) -> None:
    user = unique("user")
    execution_backend.store.record(execution(user, "j1", AI_MARKET), NOW)
    strict = advisor(execution_backend, advisor_reuse_confidence=0.99)
    assert strict.advise(user, RPA_MARKET, "en").source == "example"
    off = advisor(execution_backend, advisor_enabled=False)
    assert off.advise(user, RPA_MARKET, "en").source == "planned"


def test_feedback_on_a_strategy_with_no_run_yet_counts_when_it_runs(
    execution_backend: ExecutionBackend,
) -> None:
    user, store = unique("user"), execution_backend.store
    ask = advisor(execution_backend)
    assert ask.feedback(user, "turn-a-s1", "rejected_step", strategy_id="fresh")
    store.record(execution(user, "j1", AI_MARKET, strategy="fresh"), NOW)
    assert store.list_executions(user, NOW, 1)[0].penalties == 1
