"""The judge: the configured model grades each answer against the gold answer with the
published rubric (``eval/JUDGE.md``, the text between its ``---`` lines)."""

from __future__ import annotations

import re
import time
from pathlib import Path

from pydantic import Field

from shared.conversation.terms import terms
from shared.errors import DependencyUnavailable, ModelOutputInvalid
from shared.fakes.scripted_llm import ScriptedLLM
from shared.models.base import Strict
from shared.ports import LLM, ChatTurn, LLMRequest, Usage

RUBRIC_FILE = Path(__file__).resolve().parent / "JUDGE.md"
BUSY_ATTEMPTS = 6  # a model service that turns the judge away (429) is waited out


class Verdict(Strict):
    correct: bool
    reason: str = Field(default="", max_length=300)


def rubric() -> str:
    parts = RUBRIC_FILE.read_text().split("\n---\n")
    if len(parts) < 3:
        raise ValueError(f"{RUBRIC_FILE} must hold the rubric between two '---' lines")
    return parts[1].strip()


def judge_request(question: str, gold: str, answer: str) -> LLMRequest:
    text = f"Question: {question}\nGold answer: {gold}\nAssistant's answer: {answer[:4000]}"
    return LLMRequest(
        kind="judge",
        system=rubric(),
        messages=[ChatTurn(role="user", text=text)],
        max_output_tokens=200,
        temperature=0.0,
    )


def judge(llm: LLM, question: str, gold: str, answer: str) -> tuple[Verdict, Usage]:
    request = judge_request(question, gold, answer)
    try:
        return llm.structured(request, Verdict)
    except ModelOutputInvalid:  # one more try, as the product does for its own calls
        return llm.structured(request, Verdict)


def judge_patiently(
    llm: LLM, question: str, gold: str, answer: str, first_wait: float = 2.0
) -> tuple[Verdict, Usage]:
    """``judge``, waiting out a busy model (429: ``DependencyUnavailable``) with a doubling
    pause instead of counting the question as failed; the last refusal is raised."""
    for attempt in range(BUSY_ATTEMPTS):
        try:
            return judge(llm, question, gold, answer)
        except DependencyUnavailable:
            if attempt == BUSY_ATTEMPTS - 1:
                raise
            time.sleep(first_wait * 2**attempt)
    raise AssertionError("unreachable")


def overlap_judge() -> ScriptedLLM:
    """The test model of the command's own test (``--provider scripted``): correct when the
    answer holds at least half of the gold answer's terms. Never a published figure."""

    def grade(request: LLMRequest, schema: object) -> Verdict:
        text = request.messages[-1].text
        gold = re.search(r"Gold answer: (.*)\n", text)
        answer = text.rpartition("Assistant's answer: ")[2]
        wanted = set(terms(gold.group(1) if gold else ""))
        found = wanted & set(terms(answer))
        correct = bool(wanted) and len(found) * 2 >= len(wanted)
        return Verdict(correct=correct, reason=f"{len(found)} of {len(wanted)} gold terms")

    return ScriptedLLM(handler=grade)
