"""A lowercase first name (first_names.py) is a person only where a name stands; the
cases it finds are in test_casual_people.py. Our own wordings, not the frozen set's."""

from __future__ import annotations

import pytest

from shared.understanding import UnderstandingTier
from shared.understanding.first_names import is_first_name
from shared.understanding.tier import Context


@pytest.mark.parametrize(
    "text",
    [
        "my friend will call me tonight",  # a modal, though Will is a name
        "my sister may come by later",
        "Summer is my favourite season",
        "Hope you're doing well",
        "my brother bought a rose for his wife",
    ],
)
def test_a_name_that_is_also_a_word_is_taken_only_where_a_name_stands(
    tier: UnderstandingTier, context: Context, text: str
) -> None:
    said = tier.understand(text, context, guess=True).people
    named = [m.name for m in said.mentions if m.named]
    assert named == []


def test_the_census_lists_are_read() -> None:
    assert is_first_name("Nadia") and is_first_name("ursula")
    assert not is_first_name("kindergarten")
