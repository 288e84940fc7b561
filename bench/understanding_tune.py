"""Choosing the router's thresholds on data the tier was not written from.

``.venv/bin/python -m bench.understanding_tune [--split train] [--per-intent 25]`` reads
CLINC150's train split (testkit/clinc150.py: every mapped request, ``--per-intent`` of
each other intent, all out-of-scope ones) and the labelled set, runs the tier's evidence
once per message, then prints, for a grid of ``MIN_SCORE``, ``MIN_MARGIN`` and
``records.ELSEWHERE_MARGIN``: the coverage and precision of the decided routes on CLINC150,
the labelled set and the older held-out set, and how many other-domain requests went to
an action route (tier alone and guessing). The frozen fresh set is never read.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from dataclasses import dataclass
from itertools import product
from pathlib import Path

from shared.adapters.local_embedder import LocalEmbedder
from shared.understanding import forms, records
from shared.understanding import tier as tier_module
from shared.understanding.result import Label
from shared.understanding.tier import Context, UnderstandingTier
from testkit import clinc150
from testkit.understanding_eval import load

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "understanding.jsonl"
HELDOUT = ROOT / "tests" / "data" / "understanding_routes_heldout.tsv"
SCORES = (0.40, 0.45)
MARGINS = (0.03, 0.06)
ELSEWHERE_MARGINS = (0.0, 0.03, 0.06)


@dataclass
class Seen:
    """One message and the evidence the route is decided from."""

    text: str
    truth: str | None  # our route; None: another domain (never an action)
    source: str  # "clinc" or "labelled"
    evidence: tuple[object, ...] = ()


def sample(split: str, per_intent: int) -> list[Seen]:
    kept: dict[str, int] = defaultdict(int)
    rows = []
    for example in clinc150.load(split):
        if example.route is None and example.intent != "oos":
            if kept[example.intent] >= per_intent:
                continue
            kept[example.intent] += 1
        rows.append(Seen(example.text, example.route, "clinc"))
    return rows


def evidence(tier: UnderstandingTier, seen: Seen, context: Context) -> None:
    """What ``understand`` computes before deciding the route (see tier.py)."""
    doc = tier_module.pipeline()(seen.text)
    found = tier_module.find_people(doc)
    times = tier_module.find_times(doc, context.now, context.timezone)
    label = tier_module._by_rules(doc, found, times, context)[0]
    vector = tier._embedder.embed([seen.text])[0]
    scores, elsewhere = tier.router.scores(vector), tier.router.elsewhere(vector)
    seen.evidence = (doc, found, label, scores, elsewhere, bool(times.resolved))


def route(tier: UnderstandingTier, seen: Seen, guess: bool) -> Label | None:
    doc, found, label, scores, elsewhere, timed = seen.evidence
    form = forms.form_of(doc)  # type: ignore[arg-type]
    verb = forms.first_verb(doc)  # type: ignore[arg-type]
    decision = tier._route(label, scores, form, verb, forms.words_of(doc))  # type: ignore[arg-type]
    if decision.label is None:
        decision = tier_module._plainly(decision, doc)  # type: ignore[arg-type]
    if guess and decision.label is None:
        decision = tier_module._guessed(decision, doc, found)  # type: ignore[arg-type]
    if label is None:
        fallback = tier_module._FORM_DEFAULT[form]
        words = forms.words_of(doc)  # type: ignore[arg-type]
        request = form == "request"
        decision = tier_module.not_elsewhere(decision, scores, elsewhere, words, fallback, request)  # type: ignore[arg-type]
        decision = tier_module.told_not_reminded(decision, seen.text, words, timed, fallback)  # type: ignore[arg-type]
    return decision.label


def figures(tier: UnderstandingTier, rows: list[Seen], guess: bool) -> str:
    decided = right = to_action = mapped = 0
    for seen in rows:
        said = route(tier, seen, guess)
        if seen.truth is None:
            to_action += said in clinc150.ACTIONS
            continue
        mapped += 1
        if said is not None:
            decided += 1
            right += said == seen.truth
    precision = right / decided if decided else 1.0
    return f"{decided:4}/{mapped:<4} p={precision:.3f} other->action={to_action}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="train", choices=("train", "val"))
    parser.add_argument("--per-intent", type=int, default=25)
    parser.add_argument("--misses", action="store_true", help="list wrong decisions")
    args = parser.parse_args()
    context, cases = load(DATA)
    tier = UnderstandingTier(LocalEmbedder())
    clinc = sample(args.split, args.per_intent)
    labelled = [Seen(c.text, c.route, "labelled") for c in cases]
    rows = [line.split("\t") for line in HELDOUT.read_text().splitlines() if line.strip()]
    heldout = [Seen(text, route, "heldout") for route, text, _ in rows]
    for seen in clinc + labelled + heldout:
        evidence(tier, seen, context)
    print("score margin elsewhere | CLINC150 tier | CLINC150 guess | labelled | held-out")
    chosen = records.ELSEWHERE_MARGIN
    for score, margin, apart in product(SCORES, MARGINS, ELSEWHERE_MARGINS):
        tier.router.min_score, tier.router.min_margin = score, margin
        records.ELSEWHERE_MARGIN = apart
        print(
            f"{score:.2f} {margin:.2f} {apart:.2f} | {figures(tier, clinc, False)} | "
            f"{figures(tier, clinc, True)} | {figures(tier, labelled, False)} | "
            f"{figures(tier, heldout, False)}"
        )
    records.ELSEWHERE_MARGIN = chosen
    if args.misses:
        tier.router.min_score, tier.router.min_margin = (
            tier_module.Router(tier._embedder).min_score,
            tier_module.Router(tier._embedder).min_margin,
        )
        for seen in clinc + labelled + heldout:
            for guess in (False, True):
                said = route(tier, seen, guess)
                wrong = said != seen.truth if seen.truth else said in clinc150.ACTIONS
                if said is not None and wrong:
                    print(f"miss {seen.source} guess={guess} {seen.truth} -> {said}: {seen.text}")


if __name__ == "__main__":
    main()
