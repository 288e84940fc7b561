"""The plain rules of learning from history: a request's shape, the adaptation of a past
plan, the scoring formula and the user's verdict that something was wrong."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from shared.conversation.verdicts import is_negative_verdict
from shared.models.history import Advice, Execution, PlannedStep, StrategyRuns, SubtaskFailure
from shared.services.history.prompts import advice_prompt
from shared.services.history.scoring import confidence, recency, success_rate
from shared.services.history.shape import adapt, shape, substitutions

NOW = datetime(2026, 5, 4, tzinfo=UTC)


def plan(*goals: str) -> list[PlannedStep]:
    return [PlannedStep(id=f"s{i}", agent="research", goal=g) for i, g in enumerate(goals, 1)]


@pytest.mark.parametrize(
    ("text", "language", "shaped"),
    [
        ("Plan a trip to Rome in May", "en", "plan a trip to X in X"),
        ("Analyze the AI agent market", "en", "analyze the X agent market"),
        ("Find a laptop under 1000 euros. Then ask Bea.", "en",
         "find a laptop under X euros . then ask X ."),
        ('Summarize "War and Peace"', "en", "summarize X"),
        ("[complex] Research the RPA market", "en", "[ complex ] research the X market"),
        ("Plane eine Reise nach Rom im Mai", "de", "plane eine reise nach rom im mai"),
        ("Analysiere den KI-Markt 2026", "de", "analysiere den ki-markt X"),
    ],
)  # fmt: skip
def test_a_shape_masks_names_figures_quotes_and_acronyms(
    text: str, language: str, shaped: str
) -> None:
    assert shape(text, language) == shaped


def test_a_plan_is_adapted_by_the_stretches_the_new_request_replaced() -> None:
    past = plan("Find flights to Rome in May", "Find hotels in Rome", "Compare them")
    adapted = adapt("Plan a trip to Rome in May", "Plan a trip to Lisbon in June", past)
    assert adapted is not None
    assert [s.goal for s in adapted] == [
        "Find flights to Lisbon in June", "Find hotels in Lisbon", "Compare them",
    ]  # fmt: skip
    assert adapt("Plan a trip to Rome", "Plan a trip to Rome", past) == past


@pytest.mark.parametrize(
    ("past", "new", "goal"),
    [
        ("Research the AI agent market", "Research the AI agent market in Asia", "AI market"),
        ("Research the AI agent market in Asia", "Research the AI agent market", "AI market"),
        ("Research the AI agent market", "Plan a trip to Lisbon in June", "AI market"),
        ("Research the AI agent market", "Research the RPA market", "Compare AI agents"),
    ],
)
def test_an_adaptation_that_could_keep_the_past_request_is_refused(
    past: str, new: str, goal: str
) -> None:
    """Words added or dropped, too much changed, or a name of the past request left."""
    assert adapt(past, new, plan(goal)) is None


def test_substitutions_pair_what_was_replaced_unless_most_of_it_was() -> None:
    past = "Compare the prices of Tesla and BMW electric cars"
    assert substitutions(past, "Compare the prices of Apple and Samsung phones") == [
        ("Tesla", "Apple"), ("BMW electric cars", "Samsung phones"),
    ]  # fmt: skip
    assert substitutions("Compare Tesla and BMW cars", "Compare Apple and Samsung phones") is None


def runs(successes: float, total: int, penalties: int = 0, age_days: float = 0) -> StrategyRuns:
    return StrategyRuns(
        strategy_id="A",
        runs=total,
        successes=successes,
        penalties=penalties,
        last_run=NOW - timedelta(days=age_days),
    )


def test_the_success_rate_trusts_one_success_and_counts_feedback_as_failed_runs() -> None:
    assert success_rate(runs(1, 1)) == 1.0
    assert success_rate(runs(1, 1, penalties=1)) == pytest.approx(2 / 3)
    assert success_rate(runs(5, 5, penalties=1)) == pytest.approx(6 / 7)  # raised again
    assert success_rate(runs(0, 1)) == 0.5
    assert recency(NOW - timedelta(days=30), NOW, 30) == pytest.approx(0.5)


def test_confidence_weighs_similarity_success_and_recency() -> None:
    assert confidence(0.7, runs(1, 1), NOW, 30) == pytest.approx(0.82)
    assert confidence(0.6, runs(1, 1), NOW, 30) == pytest.approx(0.76)
    assert confidence(0.9, runs(1, 1, penalties=2), NOW, 30) == pytest.approx(0.79)
    assert confidence(1.0, runs(1, 1, age_days=60), NOW, 30) == pytest.approx(0.925)
    assert confidence(-0.2, runs(1, 1), NOW, 30) == pytest.approx(0.4)


@pytest.mark.parametrize(
    "message",
    ["That was wrong.", "no, that's wrong", "this is not what I wanted", "wrong!",
     "Das war falsch", "C'est faux", "Eso está mal", "È sbagliato"],
)  # fmt: skip
def test_a_verdict_that_it_was_wrong(message: str) -> None:
    assert is_negative_verdict(message)


@pytest.mark.parametrize(
    "message", ["Is it wrong to eat late?", "That was great", "what went wrong?", "falsche Zahl"]
)
def test_anything_more_is_no_verdict(message: str) -> None:
    assert not is_negative_verdict(message)


def test_an_example_that_worked_in_part_tells_the_planner_what_failed() -> None:
    failure = SubtaskFailure(subtask_id="s2", agent="wealth", goal="g", error="bad: output")
    past = Execution(
        id="e1", user_id="alice", job_id="j1", strategy_id="A", request="Research the AI market",
        plan=plan("List vendors", "Price them"), outcome="partial", failures=[failure],
        subtasks=2, embedding_model="m", created_at=NOW, expires_at=NOW + timedelta(days=1),
    )  # fmt: skip
    text = advice_prompt(Advice(source="example", confidence=0.7, suggestion=past, plan=past.plan))
    assert "“Research the AI market”, was planned like this and worked in part" in text
    assert "- s1 research: List vendors\n- s2 research: Price them" in text
    assert "What failed: s2 (wealth) failed because bad: output. Plan those parts better." in text
    assert advice_prompt(Advice()) == ""


def test_swapped_parameters_are_substituted_at_once() -> None:
    past = plan("Specs of the Pixel", "Compare the Pixel with the iPhone")
    adapted = adapt("Compare the Pixel and the iPhone", "Compare the iPhone and the Galaxy", past)
    assert adapted is not None
    assert [s.goal for s in adapted] == [
        "Specs of the iPhone", "Compare the iPhone with the Galaxy",
    ]  # fmt: skip


def test_a_figure_inside_a_word_is_no_trace_left_behind() -> None:
    past = plan("Total cost of 5 days in Paris")
    assert adapt("Estimate a 5-day trip to Paris", "Estimate a 3-day trip to Vienna", past) is None
    kept = plan("Total cost of the 5-day trip")
    adapted = adapt("Estimate a 5-day trip to Paris", "Estimate a 3-day trip to Vienna", kept)
    assert adapted is not None and adapted[0].goal == "Total cost of the 3-day trip"
