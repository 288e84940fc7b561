"""The evaluation driver's patience (``eval/product.py``, ``eval/judge.py``) and its choice
of questions (``eval/run.py``): a busy product or model is waited out, never scored."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from eval import layouts
from eval.judge import Verdict, judge_patiently
from eval.product import MAX_WAIT_SECONDS, retry_delay
from eval.report import QuestionResult, summary
from eval.run import answerable
from shared.errors import DependencyUnavailable
from shared.fakes.scripted_llm import ScriptedLLM
from shared.ports import LLMRequest

WHEN = datetime(2023, 3, 4, tzinfo=UTC)


def busy(status: int, retry_after: str | None = None) -> httpx.Response:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return httpx.Response(status, headers=headers)


def test_retry_after_is_honoured() -> None:
    assert retry_delay(busy(429, "7"), attempt=0) == 7.0
    assert retry_delay(busy(409, "3"), attempt=5) == 3.0


def test_without_retry_after_the_wait_doubles_up_to_a_minute() -> None:
    waits = [retry_delay(busy(503), attempt) for attempt in range(8)]
    assert waits[:4] == [1.0, 2.0, 4.0, 8.0]
    assert max(waits) == MAX_WAIT_SECONDS and waits == sorted(waits)


def test_an_unreadable_or_huge_retry_after_is_bounded() -> None:
    assert retry_delay(busy(429, "Wed, 21 Oct 2026 07:28:00 GMT"), attempt=1) == 2.0
    assert retry_delay(busy(429, "86400"), attempt=0) == MAX_WAIT_SECONDS


def refusing(times: int) -> ScriptedLLM:
    """A judge model that turns the first ``times`` calls away, as a busy service does."""
    calls: list[int] = []

    def handler(request: LLMRequest, schema: object) -> Verdict:
        calls.append(1)
        if len(calls) <= times:
            raise DependencyUnavailable("the local model is busy (429)")
        return Verdict(correct=True, reason="same place")

    return ScriptedLLM(handler=handler)


def test_a_busy_judge_is_waited_out() -> None:
    verdict, _ = judge_patiently(refusing(3), "Where?", "Wipkingen", "Wipkingen", first_wait=0)
    assert verdict.correct


def test_a_judge_busy_for_good_is_an_error_not_a_wrong_answer() -> None:
    with pytest.raises(DependencyUnavailable):
        judge_patiently(refusing(100), "Where?", "Wipkingen", "Wipkingen", first_wait=0)


def question(qid: str, *evidence: str) -> layouts.Question:
    return layouts.Question(qid, "?", "!", "single-hop", frozenset(evidence), WHEN)


def test_only_questions_about_the_sessions_fed_are_asked() -> None:
    sessions = [layouts.Session("session_1", WHEN), layouts.Session("session_2", WHEN)]
    asked = answerable(
        [question("a", "D1:2"), question("b", "D2:1", "D1:4"), question("c", "D2:3", "D3:1"),
         question("d", "D7:1")],
        sessions,
    )  # fmt: skip
    assert [q.id for q in asked] == ["a", "b"]


def test_an_unjudged_question_counts_for_recall_but_not_for_accuracy() -> None:
    def result(qid: str, correct: bool | None) -> QuestionResult:
        return QuestionResult(question(qid, "D1:1"), "reply", ["D1:1"], correct, "", 10, 5, 1.0)

    figures = summary([result("a", True), result("b", False), result("c", None)])["summary"]
    assert (figures["accuracy"], figures["unjudged"], figures["recall@1"]) == (0.5, 1, 1.0)


def test_the_local_run_is_judged_by_a_rule_that_can_fail() -> None:
    from eval.judge import Verdict
    from eval.run import JUDGES, _judge_model
    from shared.ports import ChatTurn, LLMRequest

    judge = _judge_model("local")
    asked = "Gold answer: a Bernese Mountain Dog\nAssistant's answer: "
    for answer, right in (("They have a Bernese Mountain Dog.", True), ("I don't know.", False)):
        request = LLMRequest(system="", messages=[ChatTurn(role="user", text=asked + answer)])
        verdict, _ = judge.structured(request, Verdict)
        assert isinstance(verdict, Verdict) and verdict.correct is right
    assert "deterministic" in JUDGES["local"]
