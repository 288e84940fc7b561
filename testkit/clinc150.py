"""CLINC150 (Larson et al., 2019, "An Evaluation Dataset for Intent Classification and
Out-of-Scope Prediction", EMNLP-IJCNLP; github clinc/oos-eval, CC BY 3.0) read against our
routes. The data is read where the workplace keeps it (``../shared/data/clinc150/``, train
and validation only); no sentence of it is copied into the project.

``ROUTE_OF`` maps the intents that are requests of one of our routes; ``UNSCORED`` are
near ours but not one of them (a to-do or shopping list could be a note, a text message an
email; a bank's transactions are partly the expenses our budget agent keeps: "list all
purchases of video games", "how much money have i spent on restaurants", but "what was my
last transaction on my card" is the bank's): left out of every figure. Every other intent,
and out-of-scope (``oos``), is "other": it may be answered (research) or fall through,
never sent to an action route.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "clinc150"

ROUTE_OF: dict[str, str] = {
    "greeting": "greeting",
    "thank_you": "thanks",
    "reminder": "schedule",  # "what are my reminders"
    "reminder_update": "schedule",  # "remind me to ..."
    "calendar": "schedule",  # "what's on my calendar"
    "calendar_update": "schedule",  # "put ... on my calendar"
    "meeting_schedule": "schedule",  # "when is my meeting"
    "schedule_meeting": "schedule",  # "set up a meeting with ..."
    "spending_history": "budget",  # "how much did I spend on ..."
}
UNSCORED = frozenset(
    {
        "todo_list",
        "todo_list_update",
        "shopping_list",
        "shopping_list_update",
        "text",
        "transactions",
    }
)
ACTIONS = frozenset({"schedule", "notes", "email", "budget"})  # routes that start a job


@dataclass(frozen=True)
class Example:
    intent: str
    text: str

    @property
    def route(self) -> str | None:
        """Our route for it, None for "other"."""
        return ROUTE_OF.get(self.intent)


def available(split: str = "val") -> bool:
    return (DATA / f"{split}.tsv").is_file()


def load(split: str = "val") -> list[Example]:
    """A split's in-scope and out-of-scope requests, the unscored intents left out."""
    rows = []
    for name in (f"{split}.tsv", f"oos_{split}.tsv"):
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            intent, _, text = line.partition("\t")
            if text and intent not in UNSCORED:
                rows.append(Example(intent, text))
    return rows


@dataclass(frozen=True)
class RoutingFigures:
    mapped: int  # requests of one of our routes
    decided: int  # of those, routed
    right: int  # of those, to their route
    other: int  # requests of no route of ours (out of scope included)
    other_to_action: int  # of those, sent to an action route
    wrong_examples: tuple[str, ...]  # a few mistakes, for reading

    @property
    def coverage(self) -> float:
        return self.decided / self.mapped if self.mapped else 0.0

    @property
    def precision(self) -> float:
        return self.right / self.decided if self.decided else 1.0

    @property
    def other_to_action_share(self) -> float:
        return self.other_to_action / self.other if self.other else 0.0


def score(examples: Sequence[Example], route: Callable[[str], str | None]) -> RoutingFigures:
    """``route``: the label given to a text, None when left open."""
    mapped = decided = right = other = to_action = 0
    wrong: list[str] = []
    for example in examples:
        said = route(example.text)
        if example.route is None:
            other += 1
            if said in ACTIONS:
                to_action += 1
                wrong.append(f"{example.intent} -> {said}")
            continue
        mapped += 1
        if said is not None:
            decided += 1
            right += said == example.route
            if said != example.route:
                wrong.append(f"{example.intent} -> {said}")
    return RoutingFigures(mapped, decided, right, other, to_action, tuple(wrong))
