"""Scoring of the understanding tier against its labelled set (tests/data/understanding.jsonl):
route, people, facts, plans, answers. Shared by bench/understanding.py and its floor test.

A prediction leaves a part None when the provider did not decide it (the tier fell
through): for the figures that counts as nothing said, so a tier that abstains loses recall,
never precision. Facts are compared by subject and content words (stems), so a model's
wording ("Anna enjoys climbing" vs "Anna loves climbing" differ; "Anna loves climbing." and
"Anna loves climbing" do not).
"""

from __future__ import annotations

import json
import re
import statistics
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from shared.understanding.answers import KnownFact
from shared.understanding.result import Understanding
from shared.understanding.tier import Context

_STOP = frozenset(
    ["a", "an", "the", "is", "are", "was", "in", "at", "on", "to", "of", "for", "as", "and",
     "user", "s"]
)  # fmt: skip
_NEGATION = re.compile(r"\b(not|n't|no|never|no longer|dislikes?)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Case:
    text: str
    route: str
    people: list[tuple[str, str | None]]
    facts: list[tuple[str, str]]  # (about, text)
    plan: dict[str, Any] | None
    answer: str | None = None
    note: str = ""


@dataclass
class Prediction:
    route: str | None = None
    people: list[tuple[str, str | None]] | None = None
    facts: list[tuple[str, str]] | None = None
    plan: dict[str, Any] | None = None
    plan_decided: bool = False
    answer: str | None = None
    settled: bool = False  # no model call before the reply
    ms: float = 0.0


def from_understanding(understanding: Understanding) -> Prediction:
    people = understanding.people
    plan = understanding.plan
    step = plan.steps[0] if plan.decided and plan.steps else None
    said_plan: dict[str, Any] | None = None
    if step is not None:
        said_plan = {"agent": step.agent}
        if step.call is not None:
            said_plan |= {"tool": step.call.tool, "args": step.call.args}
    return Prediction(
        route=understanding.route.label,
        people=[(m.name, m.role) for m in people.mentions] if people.decided else None,
        facts=[(f.about, f.text) for f in understanding.facts.facts]
        if understanding.facts.decided
        else None,
        plan=said_plan,
        plan_decided=plan.decided,
        answer=understanding.answer.text if understanding.answer else None,
        settled=understanding.settled,
    )


def load(path: Path) -> tuple[Context, list[Case]]:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    raw = lines[0]["context"]
    context = Context(
        now=datetime.fromisoformat(raw["now"]),
        timezone=raw["timezone"],
        currency=raw["currency"],
        facts=tuple(KnownFact.model_validate(f) for f in raw["facts"]),
    )
    cases = [
        Case(
            text=row["text"],
            route=row["route"],
            people=[(p["name"], p["role"]) for p in row["people"]],
            facts=[(f["about"], f["text"]) for f in row["facts"]],
            plan=row["plan"],
            answer=row.get("answer"),
            note=row.get("note", ""),
        )
        for row in lines[1:]
    ]
    return context, cases


def fold(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text.casefold())
    return " ".join("".join(c for c in plain if not unicodedata.combining(c)).split())


def _stems(text: str, drop: Iterable[str] = ()) -> set[str]:
    words = re.findall(r"[a-z0-9]+", fold(text))
    dropped = _STOP | {fold(d) for d in drop}
    return {w[:5] for w in words if w not in dropped}


def fact_matches(truth: tuple[str, str], said: tuple[str, str]) -> bool:
    if fold(truth[0]) != fold(said[0]):
        return False
    if bool(_NEGATION.search(truth[1])) != bool(_NEGATION.search(said[1])):
        return False
    return _stems(truth[1], truth[0].split()) <= _stems(said[1])


def facts_correct(truth: Sequence[tuple[str, str]], said: Sequence[tuple[str, str]]) -> bool:
    """Every true fact said once, nothing else said."""
    left = list(said)
    for fact in truth:
        hit = next((s for s in left if fact_matches(fact, s)), None)
        if hit is None:
            return False
        left.remove(hit)
    return not left


def named(people: Iterable[tuple[str, str | None]]) -> set[tuple[str, str | None]]:
    """Named people only: "my boss" is a role, not someone to compare by name."""
    return {
        (fold(name), role)
        for name, role in people
        if name[:1].isupper() and not fold(name).startswith(("my ", "our ", "the "))
    }


def plan_correct(truth: dict[str, Any] | None, said: dict[str, Any] | None) -> bool:
    if truth is None or said is None:
        return truth is None and said is None
    if truth["agent"] != said.get("agent"):
        return False
    if "tool" in truth and truth["tool"] != said.get("tool"):
        return False
    args = said.get("args", {})
    for key, value in truth.get("args", {}).items():
        if key in ("text", "title", "description"):
            if not _stems(value) <= _stems(str(args.get(key, ""))):
                return False
        elif str(args.get(key)) != value:
            return False
    return True


@dataclass
class Figures:
    n: int = 0
    route_correct: int = 0
    route_decided: int = 0
    route_decided_correct: int = 0
    people_tp: int = 0
    people_fp: int = 0
    people_fn: int = 0
    people_decided: int = 0
    people_decided_exact: int = 0
    facts_exact: int = 0
    facts_cases: int = 0  # cases with true facts
    facts_exact_in_cases: int = 0
    facts_decided: int = 0
    facts_decided_exact: int = 0
    plans: int = 0  # cases whose truth has a tool call
    plans_decided: int = 0
    plans_decided_correct: int = 0
    answers: int = 0
    answers_correct: int = 0
    settled: int = 0
    ms: list[float] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)

    def ratio(self, part: int, whole: int) -> float:
        return part / whole if whole else 0.0

    @property
    def people_precision(self) -> float:
        return self.ratio(self.people_tp, self.people_tp + self.people_fp)

    @property
    def people_recall(self) -> float:
        return self.ratio(self.people_tp, self.people_tp + self.people_fn)

    @property
    def people_f1(self) -> float:
        p, r = self.people_precision, self.people_recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.ms) if self.ms else 0.0


def score(cases: Sequence[Case], predictions: Sequence[Prediction]) -> Figures:
    figures = Figures(n=len(cases))
    for case, said in zip(cases, predictions, strict=True):
        _score_one(figures, case, said)
    return figures


def _score_one(figures: Figures, case: Case, said: Prediction) -> None:
    figures.ms.append(said.ms)
    figures.settled += said.settled
    route_ok = said.route == case.route
    figures.route_correct += route_ok
    if said.route is not None:
        figures.route_decided += 1
        figures.route_decided_correct += route_ok
        if not route_ok:
            figures.misses.append(f"route {case.route} -> {said.route}: {case.text}")
    truth_people, said_people = named(case.people), named(said.people or [])
    figures.people_tp += len(truth_people & said_people)
    figures.people_fp += len(said_people - truth_people)
    figures.people_fn += len(truth_people - said_people)
    if said.people is not None:
        figures.people_decided += 1
        figures.people_decided_exact += truth_people == said_people
        if truth_people != said_people:
            figures.misses.append(
                f"people {sorted(truth_people)} -> {sorted(said_people)}: {case.text}"
            )
    _score_facts(figures, case, said)
    _score_plan(figures, case, said)
    if case.answer is not None or said.answer is not None:
        figures.answers += 1
        figures.answers_correct += bool(
            case.answer and said.answer and fold(case.answer) in fold(said.answer)
        )


def _score_facts(figures: Figures, case: Case, said: Prediction) -> None:
    exact = facts_correct(case.facts, said.facts or [])
    figures.facts_exact += exact
    if case.facts:
        figures.facts_cases += 1
        figures.facts_exact_in_cases += exact
    if said.facts is not None:
        figures.facts_decided += 1
        figures.facts_decided_exact += exact
        if not exact:
            figures.misses.append(f"facts {case.facts} -> {said.facts}: {case.text}")


def _score_plan(figures: Figures, case: Case, said: Prediction) -> None:
    if case.plan is not None and "tool" in case.plan:
        figures.plans += 1
    if said.plan_decided and said.plan is not None:
        figures.plans_decided += 1
        correct = plan_correct(case.plan, said.plan)
        figures.plans_decided_correct += correct
        if not correct:
            figures.misses.append(f"plan {case.plan} -> {said.plan}: {case.text}")
