from __future__ import annotations

import pytest

from shared.conversation.titles import MAX_TITLE_CHARS, title_from


@pytest.mark.parametrize(
    ("message", "title"),
    [
        ("Plan a trip to Rome. Two days in May.", "Plan a trip to Rome"),
        ("  what's   Anna's\nbirthday? ", "what's Anna's birthday?"),
        ("Hi", None),
        ("Hello!", None),
        ("   ", None),
        ("...", None),
    ],
)
def test_the_first_sentence_names_the_chat(message: str, title: str | None) -> None:
    assert title_from(message) == title


def test_a_long_sentence_is_cut_at_a_word() -> None:
    words = "remind me to call the plumber about the leaking kitchen tap tomorrow morning please"
    title = title_from(words)
    assert title is not None and title.endswith("…")
    assert len(title) <= MAX_TITLE_CHARS + 1
    assert words.startswith(title[:-1]) and words[len(title) - 1] == " "


def test_one_endless_word_is_cut_at_the_limit() -> None:
    assert title_from("x" * 200) == "x" * MAX_TITLE_CHARS + "…"
