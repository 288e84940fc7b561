"""The project's own evaluation dataset: its JSON layouts are what eval/data/own.txt says,
both readers agree on it, and it is the size the issue asked for."""

from __future__ import annotations

from collections import Counter

from eval import build_dataset, layouts


def test_the_committed_layouts_are_built_from_the_source() -> None:
    for path, text in build_dataset.outputs().items():
        assert path.read_text() == text + "\n", f"run python -m eval.build_dataset ({path.name})"


def test_twenty_sessions_and_sixty_questions_of_four_kinds() -> None:
    locomo = layouts.read(build_dataset.DATA / "own.locomo.json")
    assert sum(len(c.sessions) for c in locomo) == 20
    questions = [q for c in locomo for q in c.questions]
    assert len(questions) == 60
    kinds = Counter(q.category for q in questions)
    assert set(kinds) == {"single-hop", "multi-hop", "temporal", "open-domain"}
    assert min(kinds.values()) >= 6


def test_both_layouts_read_to_the_same_conversations() -> None:
    locomo = layouts.read(build_dataset.DATA / "own.locomo.json")
    longmemeval = layouts.read(build_dataset.DATA / "own.longmemeval.json")
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
