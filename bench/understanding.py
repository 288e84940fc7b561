"""The understanding tier against the labelled set, per provider, and its cold start.

Run from the repository root: ``.venv/bin/python -m bench.understanding [--providers
tier,tier+guess,local,tier+local,tier+guess+local] [--every N] [--heldout]`` (SmolLM2
takes seconds per message: a sample, ``--every 3``, keeps the model columns to minutes).
Providers:

- ``tier``: the deterministic tier alone (what falls through counts as nothing said);
- ``local``: the model alone: SmolLM2 on the test stack's local model service, reached as the
  functions reach it (the production ``vertex`` adapter, ``Profile.model_env``), one
  classification call and one extraction call per message, as the turn and the extraction
  task make them without the tier (needs ``scripts/stack up --profile test``);
- ``tier+local``: the tier first, the model only for the parts that fall through;
- ``tier+guess``, ``tier+guess+local``: the same with the open route and people guessed
  (``MODEL_STRENGTH=weak``, what ``make dev`` runs with the local model).

``--heldout`` adds routes and named people on tests/data/understanding_routes_heldout.tsv,
``--fresh`` on tests/data/understanding_fresh_frozen.tsv (frozen, never tuned on),
``--tune`` on tests/data/understanding_tune_own.tsv (written before the last tuning round,
tuned on). The frozen set was labelled before the family roles (grandparent, cousin,
in_law ...) existed: its scoring folds them into ``other``, the role it names them by.

Printed per provider: route accuracy, people precision/recall/F1 (named people and their
roles), facts fully correct, the share of messages settled with no model call before the
reply, p50 latency; for the tier also the precision of what it decided (right or abstain).
Cold start (imports, first call) is measured in fresh interpreters.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from bench.understanding_providers import PROVIDERS, Provider
from shared.adapters.local_embedder import LocalEmbedder
from shared.understanding.tier import Context, UnderstandingTier
from testkit import clinc150
from testkit.understanding_eval import Case, Figures, Prediction, from_understanding, load, score

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "understanding.jsonl"
HELDOUT = ROOT / "tests" / "data" / "understanding_routes_heldout.tsv"
FRESH = ROOT / "tests" / "data" / "understanding_fresh_frozen.tsv"
TUNE = ROOT / "tests" / "data" / "understanding_tune_own.tsv"
# Roles added after the frozen set was labelled; it calls all of them "other".
_FAMILY_ROLES = frozenset(
    {"grandparent", "grandchild", "aunt_uncle", "cousin", "niece_nephew", "in_law"}
)

_COLD = {
    "spaCy + en_core_web_sm": (
        "from shared.understanding.nlp import pipeline",
        "pipeline()('My sister Anna lives in Berlin.')",
    ),
    "dateparser": (
        "from dateparser.date import DateDataParser",
        "DateDataParser(languages=['en']).get_date_data('tomorrow at 10am')",
    ),
    "router (MiniLM + vectors)": (
        "from shared.adapters.local_embedder import LocalEmbedder\n"
        "from shared.understanding.router import Router",
        "Router(LocalEmbedder()).route('remind me to call Anna')",
    ),
    "whole tier": (
        "from datetime import UTC, datetime\n"
        "from shared.adapters.local_embedder import LocalEmbedder\n"
        "from shared.understanding.tier import Context, UnderstandingTier",
        "UnderstandingTier(LocalEmbedder()).understand('Remind me to call my mother Maria "
        "tomorrow at 10am', Context(now=datetime.now(UTC), timezone='Europe/Zurich'))",
    ),
}


def cold_start(name: str) -> tuple[float, float, float]:
    """Seconds to import, seconds of the first call, peak RSS in MiB: a fresh interpreter."""
    imports, call = _COLD[name]
    code = (
        "import resource, time\nstarted = time.perf_counter()\n"
        f"{imports}\nimported = time.perf_counter()\n{call}\n"
        "done = time.perf_counter()\n"
        "rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024\n"
        "print(imported - started, done - imported, rss)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    first, second, rss = out.stdout.split()
    return float(first), float(second), float(rss)


def warm_parts(runs: int = 20) -> dict[str, float]:
    """Median milliseconds of each part on one message, everything loaded."""
    from shared.adapters.local_embedder import LocalEmbedder
    from shared.understanding.nlp import pipeline
    from shared.understanding.tier import UnderstandingTier

    text = "Remind me to call my mother Maria tomorrow at 10am"
    embedder = LocalEmbedder()
    tier = UnderstandingTier(embedder)
    tier.load()
    context = Context(now=datetime.now(UTC), timezone="Europe/Zurich")
    parts: dict[str, Callable[[], object]] = {
        "embed one message (MiniLM)": lambda: embedder.embed([text]),
        "spaCy parse": lambda: pipeline()(text),
        "whole tier": lambda: tier.understand(text, context),
    }
    medians = {}
    for name, call in parts.items():
        seconds = []
        for _ in range(runs):
            started = time.perf_counter()
            call()
            seconds.append(time.perf_counter() - started)
        medians[name] = statistics.median(seconds) * 1000
    return medians


def run(provider: Provider, context: Context, texts: list[str]) -> list[Prediction]:
    provider.warm_up()
    return [provider.predict(text, context) for text in texts]


def report(name: str, figures: Figures, show_decided: bool) -> None:
    ratio = figures.ratio
    print(f"\n== {name} ({figures.n} messages)")
    print(f"route accuracy              {ratio(figures.route_correct, figures.n):.3f}")
    print(
        f"people P / R / F1           {figures.people_precision:.3f} / "
        f"{figures.people_recall:.3f} / {figures.people_f1:.3f}"
    )
    print(
        f"facts fully correct         {ratio(figures.facts_exact, figures.n):.3f} of all, "
        f"{ratio(figures.facts_exact_in_cases, figures.facts_cases):.3f} of the "
        f"{figures.facts_cases} with facts"
    )
    print(f"settled, no model call      {ratio(figures.settled, figures.n):.3f}")
    print(f"p50 per message             {figures.p50_ms:.1f} ms")
    if show_decided:
        _decided(figures)


def _decided(figures: Figures) -> None:
    ratio = figures.ratio
    print("-- what the tier decided (precision; share decided)")
    for part, right, decided in (
        ("route", figures.route_decided_correct, figures.route_decided),
        ("people", figures.people_decided_exact, figures.people_decided),
        ("facts", figures.facts_decided_exact, figures.facts_decided),
        ("plans", figures.plans_decided_correct, figures.plans_decided),
        ("answers", figures.answers_correct, figures.answers),
    ):
        print(f"{part:<27} {ratio(right, decided):.3f}; {decided}/{figures.n}")


def _legacy(prediction: Prediction) -> Prediction:
    """A prediction in the role vocabulary of a set labelled before the family roles."""
    if prediction.people is None:
        return prediction
    people = [
        (name, "other" if role in _FAMILY_ROLES else role) for name, role in prediction.people
    ]
    return replace(prediction, people=people)


def heldout(path: Path = HELDOUT, legacy_roles: bool = False, misses: bool = False) -> None:
    """Routes and named people on messages written after the tier's rules were chosen
    (route, text, name:role;...): a check that they were not fitted to the labelled set.
    ``HELDOUT`` was written after the guesses; ``FRESH`` before any tuning for issue 28."""
    context, _ = load(DATA)
    rows = [line.split("\t") for line in path.read_text().splitlines() if line.strip()]
    cases = [
        Case(text=text, route=route, people=_people(people), facts=[], plan=None)
        for route, text, people in rows
    ]
    tier = UnderstandingTier(LocalEmbedder())
    for guess in (False, True):
        said = [from_understanding(tier.understand(c.text, context, guess)) for c in cases]
        said = [_legacy(p) for p in said] if legacy_roles else said
        figures = score(cases, said)
        kind = "tier+guess" if guess else "tier"
        print(f"\n== {path.name} ({len(cases)} messages), {kind}")
        ratio = figures.ratio
        print(f"route accuracy              {ratio(figures.route_correct, figures.n):.3f}")
        print(
            f"people P / R / F1           {figures.people_precision:.3f} / "
            f"{figures.people_recall:.3f} / {figures.people_f1:.3f}"
        )
        if not guess:
            print(
                f"route decided               {figures.route_decided}/{figures.n} "
                f"(precision {ratio(figures.route_decided_correct, figures.route_decided):.3f})"
            )
        if misses:
            print("\n".join(f"  miss: {line}" for line in figures.misses))


def clinc150_block(split: str = "val") -> None:
    """Routes on CLINC150 (Larson et al., 2019; CC BY 3.0), mapped by testkit/clinc150.py."""
    if not clinc150.available(split):
        print(f"\n== CLINC150 {split}: not found at {clinc150.DATA}")
        return
    examples = clinc150.load(split)
    context, _ = load(DATA)
    tier = UnderstandingTier(LocalEmbedder())
    for guess in (False, True):

        def route(text: str, guess: bool = guess) -> str | None:
            return tier.understand(text, context, guess).route.label

        figures = clinc150.score(examples, route)
        kind = "tier+guess" if guess else "tier"
        print(f"\n== CLINC150 {split} ({len(examples)} requests), {kind}")
        print(
            f"mapped routes: coverage     {figures.coverage:.3f} ({figures.decided}/"
            f"{figures.mapped}), precision {figures.precision:.3f}"
        )
        print(
            f"other/out of scope -> action {figures.other_to_action_share:.4f} "
            f"({figures.other_to_action}/{figures.other})"
        )
        counts = Counter(figures.wrong_examples).most_common(8)
        print("most frequent mistakes      " + "; ".join(f"{k} x{n}" for k, n in counts))


def _people(column: str) -> list[tuple[str, str | None]]:
    pairs = [item.split(":") for item in column.split(";") if item]
    return [(name, role or None) for name, role in pairs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--providers", default="tier", help="comma-separated: " + ",".join(PROVIDERS)
    )
    parser.add_argument("--limit", type=int, default=0, help="first N messages only")
    parser.add_argument("--every", type=int, default=1, help="every Nth message (a sample)")
    parser.add_argument("--misses", action="store_true", help="list what the tier got wrong")
    parser.add_argument("--no-cold", action="store_true", help="skip the cold-start figures")
    parser.add_argument(
        "--heldout", action="store_true", help="the held-out set's routes and people"
    )
    parser.add_argument(
        "--clinc150", action="store_true", help="routes on CLINC150 validation (mapped)"
    )
    parser.add_argument(
        "--fresh", action="store_true", help="the frozen fresh set's routes and people"
    )
    parser.add_argument(
        "--tune", action="store_true", help="the own tuning set's routes and people"
    )
    args = parser.parse_args()
    context, cases = load(DATA)
    cases = cases[:: args.every]
    cases = cases[: args.limit] if args.limit else cases
    if not args.no_cold:
        print("cold start (fresh interpreter): import s, first call s, peak RSS MiB")
        for name in _COLD:
            imported, first, rss = cold_start(name)
            print(f"  {name:<27} {imported:6.2f} {first:6.2f} {rss:8.0f}")
        print("warm, one message (median ms)")
        for name, ms in warm_parts().items():
            print(f"  {name:<27} {ms:8.1f}")
    for name in args.providers.split(","):
        provider = PROVIDERS[name]()
        started = time.perf_counter()
        figures = score(cases, run(provider, context, [c.text for c in cases]))
        report(name, figures, show_decided=name == "tier")
        print(f"wall time                   {time.perf_counter() - started:.1f} s")
        if args.misses and name == "tier":
            print("\n".join(f"  miss: {line}" for line in figures.misses))
    if args.heldout:
        heldout(HELDOUT)
    if args.fresh:
        heldout(FRESH, legacy_roles=True)
    if args.tune:
        heldout(TUNE, misses=args.misses)
    if args.clinc150:
        clinc150_block()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak RSS of this process: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
