"""The two dataset layouts the evaluation reads, turned into one shape.

- **LoCoMo**: a list of conversations; each has ``conversation`` (``speaker_a``,
  ``speaker_b``, ``session_N_date_time`` such as "1:56 pm on 8 May, 2023", ``session_N``
  lists of ``{speaker, dia_id, text}``) and ``qa`` (``question``, ``answer``, ``evidence``
  dia ids, ``category``: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
  5 adversarial, which has no answer to find and is skipped). Both speakers are people, so
  every message is sent as the user's turn prefixed with its speaker ("Caroline: ...");
  a speaker called "Assistant" is not sent (the product answers for itself).
- **LongMemEval**: a list of instances, each a question with its own haystack
  (``haystack_sessions`` of ``{role, content, has_answer}`` turns, ``haystack_dates`` such
  as "2023/05/20 (Sat) 02:21", ``question_date``, ``answer_session_ids``). Instances that
  share a haystack share one user. Only the user's turns are sent.

Evidence is a set of message ids ("D3:5"; for LongMemEval "<session id>:<turn index>", the
turns marked ``has_answer``, else every turn of the answer sessions). Questions are asked
after the last session (LoCoMo) or at their ``question_date`` (LongMemEval).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
ASSISTANT = "assistant"


@dataclass(frozen=True)
class Message:
    id: str  # the dataset's id of the message: the evidence names these
    text: str


@dataclass
class Session:
    id: str
    when: datetime
    messages: list[Message] = field(default_factory=list)


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    answer: str
    category: str
    evidence: frozenset[str]
    asked_at: datetime
    context: tuple[str, ...] = ()


@dataclass
class Conversation:
    id: str
    sessions: list[Session] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def read(path: Path) -> list[Conversation]:
    data: Any = json.loads(path.read_text())
    items = data if isinstance(data, list) else [data]
    if items and "haystack_sessions" in items[0]:
        return longmemeval(items)
    return locomo(items)


def locomo(samples: list[dict[str, Any]]) -> list[Conversation]:
    conversations = []
    for sample in samples:
        dialogue = sample["conversation"]
        numbers = sorted(
            int(key.split("_")[1]) for key in dialogue if key.count("_") == 1 and key[-1].isdigit()
        )
        two_people = ASSISTANT not in {str(dialogue.get(s, "")).lower() for s in
                                       ("speaker_a", "speaker_b")}  # fmt: skip
        conversation = Conversation(str(sample["sample_id"]))
        for number in numbers:
            when = _locomo_date(dialogue[f"session_{number}_date_time"])
            session = Session(f"session_{number}", when)
            for turn in dialogue[f"session_{number}"]:
                if str(turn["speaker"]).lower() == ASSISTANT:
                    continue
                text = f"{turn['speaker']}: {turn['text']}" if two_people else turn["text"]
                session.messages.append(Message(str(turn["dia_id"]), text))
            conversation.sessions.append(session)
        asked = max(s.when for s in conversation.sessions) + timedelta(days=1)
        for n, qa in enumerate(sample["qa"], start=1):
            category = LOCOMO_CATEGORIES.get(int(qa.get("category", 0)))
            if category is None or "answer" not in qa:
                continue
            conversation.questions.append(
                Question(f"{conversation.id}-q{n}", qa["question"], str(qa["answer"]), category,
                         frozenset(qa.get("evidence", [])), asked, tuple(qa.get("context", [])))
            )  # fmt: skip
        conversations.append(conversation)
    return conversations


def longmemeval(instances: list[dict[str, Any]]) -> list[Conversation]:
    by_haystack: dict[tuple[str, ...], Conversation] = {}
    for item in instances:
        ids = tuple(str(i) for i in item["haystack_session_ids"])
        conversation = by_haystack.get(ids)
        if conversation is None:
            conversation = by_haystack[ids] = Conversation(f"lme-{len(by_haystack) + 1}")
            for sid, when, turns in zip(ids, item["haystack_dates"], item["haystack_sessions"],
                                        strict=True):  # fmt: skip
                session = Session(sid, _longmemeval_date(when))
                session.messages = [
                    Message(f"{sid}:{i}", t["content"])
                    for i, t in enumerate(turns)
                    if t.get("role") == "user"
                ]
                conversation.sessions.append(session)
        conversation.questions.append(_longmemeval_question(item, conversation))
    return list(by_haystack.values())


def _longmemeval_question(item: dict[str, Any], conversation: Conversation) -> Question:
    answer_sessions = {str(s) for s in item.get("answer_session_ids", [])}
    marked, whole = set(), set()
    for sid, turns in zip(item["haystack_session_ids"], item["haystack_sessions"], strict=True):
        for i, turn in enumerate(turns):
            if turn.get("role") != "user":
                continue
            if turn.get("has_answer"):
                marked.add(f"{sid}:{i}")
            if str(sid) in answer_sessions:
                whole.add(f"{sid}:{i}")
    return Question(
        str(item["question_id"]), item["question"], str(item["answer"]),
        str(item.get("question_type", "")), frozenset(marked or whole),
        _longmemeval_date(item.get("question_date") or item["haystack_dates"][-1]),
        tuple(item.get("context", [])),
    )  # fmt: skip


def _locomo_date(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def _longmemeval_date(text: str) -> datetime:
    day, _, clock = text.partition(" (")
    return datetime.strptime(f"{day} {clock.partition(') ')[2] or '00:00'}",
                             "%Y/%m/%d %H:%M").replace(tzinfo=UTC)  # fmt: skip


def session_of(message_id: str) -> str:
    """The session a message id belongs to: "D3:5" -> "session_3", "s12:4" -> "s12"."""
    head = message_id.rsplit(":", 1)[0]
    return f"session_{head[1:]}" if head.startswith("D") and head[1:].isdigit() else head
