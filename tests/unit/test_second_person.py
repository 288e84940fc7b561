"""What is said back speaks to the user; stored facts keep "the user"."""

from __future__ import annotations

import pytest

from shared.conversation.second_person import to_you


@pytest.mark.parametrize(
    ("stored", "said"),
    [
        ("The user is allergic to peanuts.", "You are allergic to peanuts."),
        ("The user likes jazz", "You like jazz"),
        ("The user watches films on Sundays", "You watch films on Sundays"),
        ("The user studies law", "You study law"),
        ("The user has two kids", "You have two kids"),
        ("The user still lives in Bern", "You still live in Bern"),
        ("The user moved to Basel", "You moved to Basel"),
        ("Anna is the user's sister", "Anna is your sister"),
        ("Tom visited the user", "Tom visited you"),
        ("The user's boss Karin likes tea", "Your boss Karin likes tea"),
        ("The user doesn't eat meat", "You don't eat meat"),
        ("Anna lives in Bern", "Anna lives in Bern"),
        ("The user was born in Chur", "You were born in Chur"),
        ("The user passes the exam", "You pass the exam"),
    ],
)
def test_the_user_is_spoken_to(stored: str, said: str) -> None:
    assert to_you(stored) == said
