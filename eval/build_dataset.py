"""Build the project's evaluation datasets from their sources in ``eval/data/`` (the format
is described at the top of ``own.txt``) into the LoCoMo layout and the LongMemEval layout:
``own.txt`` (the dataset the retrieval was tuned on) and ``heldout.txt`` (written after the
tuning, never tuned on).

    .venv/bin/python -m eval.build_dataset          # writes eval/data/{own,heldout}.*.json
    .venv/bin/python -m eval.build_dataset --check  # fails if they are out of date

LoCoMo layout: a list of conversations, each with ``conversation`` (speakers,
``session_N_date_time``, ``session_N`` lists of ``{speaker, dia_id, text}``), ``qa``
(``question, answer, evidence, category``: 1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop), ``observation`` (``session_N_observation``: speaker -> ``[text, dia_id]``;
ours add the day a fact is about as a third item when it names one) and
``session_summary``. A question may carry ``context``: messages sent before it in its chat.
LongMemEval layout: one instance per question with its haystack (``haystack_sessions`` of
``{role, content, has_answer}`` turns, ``haystack_dates``, ``answer_session_ids``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
# each is built from DATA/<name>.txt into DATA/<name>.locomo.json and .longmemeval.json
DATASETS = ("own", "heldout")
CATEGORIES = {"multi-hop": 1, "temporal": 2, "open-domain": 3, "single-hop": 4}
LONGMEMEVAL_TYPES = {
    "single-hop": "single-session-user",
    "multi-hop": "multi-session",
    "temporal": "temporal-reasoning",
    "open-domain": "multi-session",
}
ASSISTANT = "Assistant"


@dataclass
class Message:
    dia_id: str
    text: str
    observation: str | None = None
    anchor: str | None = None


@dataclass
class Session:
    number: int
    when: datetime
    summary: str = ""
    messages: list[Message] = field(default_factory=list)


@dataclass
class Question:
    category: str
    question: str
    answer: str
    evidence: list[str]
    context: list[str]


@dataclass
class Conversation:
    sample_id: str
    user: str
    sessions: list[Session] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def parse(text: str) -> list[Conversation]:
    conversations: list[Conversation] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or (line.startswith("#") and not line.startswith(("# conv", "## "))):
            continue
        if match := re.match(r"# conversation (\S+) user=(.+)$", line):
            conversations.append(Conversation(match.group(1), match.group(2).strip()))
        elif match := re.match(r"## session (\d+) (\d{4}-\d{2}-\d{2} \d{2}:\d{2})$", line):
            when = datetime.strptime(match.group(2), "%Y-%m-%d %H:%M")
            conversations[-1].sessions.append(Session(int(match.group(1)), when))
        elif line.startswith("summary: "):
            conversations[-1].sessions[-1].summary = line.removeprefix("summary: ")
        elif line.startswith("- "):
            session = conversations[-1].sessions[-1]
            parts = [p.strip() for p in line[2:].split("||")]
            anchor = parts[2].removeprefix("@") if len(parts) > 2 else None
            dia_id = f"D{session.number}:{len(session.messages) + 1}"
            observation = parts[1] if len(parts) > 1 else None
            session.messages.append(Message(dia_id, parts[0], observation, anchor))
        elif line.startswith("? "):
            category, question, answer, evidence, *context = (
                p.strip() for p in line[2:].split("|")
            )
            conversations[-1].questions.append(
                Question(category, question, answer, evidence.split(),
                         [c.strip() for c in context[0].split(";")] if context else [])
            )  # fmt: skip
    check(conversations)
    return conversations


def check(conversations: list[Conversation]) -> None:
    for conversation in conversations:
        stated = {m.dia_id for s in conversation.sessions for m in s.messages if m.observation}
        for q in conversation.questions:
            if q.category not in CATEGORIES:
                raise ValueError(f"{q.question!r}: unknown category {q.category!r}")
            missing = [e for e in q.evidence if e not in stated]
            if missing:
                raise ValueError(f"{q.question!r}: evidence {missing} states no fact")


def locomo_date(when: datetime) -> str:
    hour = when.strftime("%I").lstrip("0")
    return f"{hour}:{when:%M} {when.strftime('%p').lower()} on {when.day} {when:%B}, {when.year}"


def to_locomo(conversations: list[Conversation]) -> list[dict[str, Any]]:
    samples = []
    for c in conversations:
        dialogue: dict[str, object] = {"speaker_a": c.user, "speaker_b": ASSISTANT}
        observations, summaries = {}, {}
        for s in c.sessions:
            dialogue[f"session_{s.number}_date_time"] = locomo_date(s.when)
            dialogue[f"session_{s.number}"] = [
                {"speaker": c.user, "dia_id": m.dia_id, "text": m.text} for m in s.messages
            ]
            observations[f"session_{s.number}_observation"] = {
                c.user: [
                    [m.observation, m.dia_id, *([m.anchor] if m.anchor else [])]
                    for m in s.messages
                    if m.observation
                ]
            }
            summaries[f"session_{s.number}_summary"] = s.summary
        qa = [
            {"question": q.question, "answer": q.answer, "evidence": q.evidence,
             "category": CATEGORIES[q.category], **({"context": q.context} if q.context else {})}
            for q in c.questions
        ]  # fmt: skip
        samples.append(
            {
                "sample_id": c.sample_id,
                "conversation": dialogue,
                "qa": qa,
                "observation": observations,
                "session_summary": summaries,
                "event_summary": {},
            }
        )
    return samples


def longmemeval_date(when: datetime) -> str:
    return when.strftime("%Y/%m/%d (%a) %H:%M")


def to_longmemeval(conversations: list[Conversation]) -> list[dict[str, Any]]:
    instances = []
    for c in conversations:
        ids = [f"{c.sample_id}_s{s.number}" for s in c.sessions]
        asked = c.sessions[-1].when + timedelta(days=1)
        for n, q in enumerate(c.questions, start=1):
            evidence = set(q.evidence)
            haystack = [
                [{"role": "user", "content": m.text, "has_answer": m.dia_id in evidence}
                 for m in s.messages]
                for s in c.sessions
            ]  # fmt: skip
            sessions = {e.split(":")[0][1:] for e in q.evidence}
            instances.append(
                {
                    "question_id": f"{c.sample_id}-q{n}",
                    "question_type": LONGMEMEVAL_TYPES[q.category],
                    "question": q.question,
                    "answer": q.answer,
                    "question_date": longmemeval_date(asked),
                    "haystack_session_ids": ids,
                    "haystack_dates": [longmemeval_date(s.when) for s in c.sessions],
                    "haystack_sessions": haystack,
                    "answer_session_ids": [
                        f"{c.sample_id}_s{n}" for n in sorted(sessions, key=int)
                    ],
                    **({"context": q.context} if q.context else {}),
                }
            )
    return instances


def outputs() -> dict[Path, str]:
    built = {}
    for name in DATASETS:
        conversations = parse((DATA / f"{name}.txt").read_text())
        built[DATA / f"{name}.locomo.json"] = json.dumps(
            to_locomo(conversations), indent=1, ensure_ascii=False
        )
        built[DATA / f"{name}.longmemeval.json"] = json.dumps(
            to_longmemeval(conversations), indent=1, ensure_ascii=False
        )
    return built


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    stale = []
    for path, text in outputs().items():
        if args.check:
            if not path.exists() or path.read_text() != text + "\n":
                stale.append(path.name)
        else:
            path.write_text(text + "\n")
    if stale:
        sys.exit(f"out of date: {stale}; run .venv/bin/python -m eval.build_dataset")


if __name__ == "__main__":
    main()
