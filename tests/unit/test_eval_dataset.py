"""The project's evaluation datasets (the own one, tuned on, and the held-out one): their JSON
layouts are what their sources in eval/data/ say, both readers agree on them, and they are
the size and mix of questions their sources promise."""

from __future__ import annotations

from collections import Counter

import pytest

from eval import build_dataset, layouts

# per dataset: questions per category, and how many are follow-ups (asked after context)
PROMISED = {
    "own": ({"single-hop": 30, "multi-hop": 12, "temporal": 12, "open-domain": 6}, 2),
    "heldout": ({"single-hop": 24, "multi-hop": 14, "temporal": 14, "open-domain": 8}, 5),
}


def test_the_committed_layouts_are_built_from_the_source() -> None:
    for path, text in build_dataset.outputs().items():
        assert path.read_text() == text + "\n", f"run python -m eval.build_dataset ({path.name})"


def test_every_dataset_is_built_and_promised() -> None:
    assert set(build_dataset.DATASETS) == set(PROMISED)


@pytest.mark.parametrize("name", sorted(PROMISED))
def test_twenty_sessions_and_sixty_questions_of_four_kinds(name: str) -> None:
    locomo = layouts.read(build_dataset.DATA / f"{name}.locomo.json")
    assert sum(len(c.sessions) for c in locomo) == 20
    questions = [q for c in locomo for q in c.questions]
    kinds, follow_ups = PROMISED[name]
    assert Counter(q.category for q in questions) == kinds
    assert sum(kinds.values()) == 60
    assert sum(1 for q in questions if q.context) == follow_ups


@pytest.mark.parametrize("name", sorted(PROMISED))
def test_both_layouts_read_to_the_same_conversations(name: str) -> None:
    locomo = layouts.read(build_dataset.DATA / f"{name}.locomo.json")
    longmemeval = layouts.read(build_dataset.DATA / f"{name}.longmemeval.json")
    assert [len(c.sessions) for c in longmemeval] == [len(c.sessions) for c in locomo]
    for a, b in zip(locomo, longmemeval, strict=True):
        assert [s.when for s in a.sessions] == [s.when for s in b.sessions]
        assert [m.text for s in a.sessions for m in s.messages] == [
            m.text for s in b.sessions for m in s.messages
        ]
        assert [q.text for q in a.questions] == [q.text for q in b.questions]
        # every question's evidence is a message of the conversation, in both layouts
        ids_a = {m.id for s in a.sessions for m in s.messages}
        ids_b = {m.id for s in b.sessions for m in s.messages}
        assert all(q.evidence and q.evidence <= ids_a for q in a.questions)
        assert all(q.evidence and q.evidence <= ids_b for q in b.questions)


def test_the_two_datasets_share_no_conversation() -> None:
    own, heldout = (layouts.read(build_dataset.DATA / f"{n}.locomo.json") for n in PROMISED)
    assert not {c.id for c in own} & {c.id for c in heldout}
    texts = {m.text for c in own for s in c.sessions for m in s.messages}
    assert not texts & {m.text for c in heldout for s in c.sessions for m in s.messages}


def test_a_locomo_conversation_between_two_people_sends_both_with_their_names() -> None:
    sample = {
        "sample_id": "x",
        "conversation": {
            "speaker_a": "Ana", "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "Hi Ben"},
                          {"speaker": "Ben", "dia_id": "D1:2", "text": "Hi Ana"}],
        },
        "qa": [{"question": "?", "answer": 7, "evidence": ["D1:2"], "category": 2},
               {"question": "trick", "adversarial_answer": "y", "evidence": [], "category": 5}],
    }  # fmt: skip
    [conversation] = layouts.locomo([sample])
    assert [m.text for m in conversation.sessions[0].messages] == ["Ana: Hi Ben", "Ben: Hi Ana"]
    [question] = conversation.questions
    assert (question.answer, question.category, question.asked_at.day) == ("7", "temporal", 9)
    assert layouts.session_of("D12:3") == "session_12"
