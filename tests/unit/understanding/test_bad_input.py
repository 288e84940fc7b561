"""Input nobody writes a rule for: very long, emoji only, other scripts. The tier reads
nothing into it: no person, no action, at most a short greeting."""

from __future__ import annotations

import pytest

from shared.understanding import UnderstandingTier
from shared.understanding.tier import MAX_CHARS, Context

_ACTIONS = {"schedule", "notes", "email", "budget"}


@pytest.mark.parametrize(
    "text",
    [
        "remind me to call Anna tomorrow at 10am " * (MAX_CHARS // 20),
        "🙂🙂🙂",
        "🎉🎂🥳 🎈",
        "Моя сестра Анна живёт в Берлине",
        "我的妹妹安娜住在柏林",
        "أختي آنا تعيش في برلين",
        "अपॉइंटमेंट कल सुबह दस बजे",
        "remember that 🙂🙂🙂",  # kept as told: nothing to keep
        "hi!!! 🎉🎉 🎉 🎉",  # a greeting cut: nothing after it
        "hey, " + "a " * (MAX_CHARS // 2 - 3),  # a greeting before a long run of nothing
    ],
    ids=[
        "very-long",
        "emoji",
        "emoji-party",
        "cyrillic",
        "chinese",
        "arabic",
        "devanagari",
        "kept-emoji",
        "greeting-emoji",
        "greeting-long",
    ],
)
def test_nothing_is_read_into_it(tier: UnderstandingTier, context: Context, text: str) -> None:
    for guess in (False, True):
        said = tier.understand(text, context, guess)
        assert said.route.label not in _ACTIONS
        assert said.people.mentions == []
        assert not said.facts.facts and not (said.plan.decided and said.plan.steps)
