"""Spending questions over the window the user names, read in their time zone with weeks
from Monday, and the words that name it; what is not such a question is left alone."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from shared.understanding.spending import spending_asked

NOW = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)  # Saturday 28 November, 13:00 in Zurich
ZONE = "Europe/Zurich"


@pytest.mark.parametrize(
    ("asked", "first", "last", "words", "category"),
    [
        ("how much did i spend this week?", (11, 23), (11, 29), "this week", None),
        ("how much did i spend this wk", (11, 23), (11, 29), "this week", None),
        ("what did i spend yesterday", (11, 27), (11, 27), "yesterday", None),
        ("How much did I spend today?", (11, 28), (11, 28), "today", None),
        ("how much did I spend last week", (11, 16), (11, 22), "last week", None),
        ("how much money have i spent this month", (11, 1), (11, 30), "this month", None),
        ("what did i spend for groceries last month", (10, 1), (10, 31), "last month", "groceries"),
        ("how much have i spent so far this year", (1, 1), (12, 31), "this year", None),
        ("How much did I spend in March?", (3, 1), (3, 31), "in March", None),
        ("how much have i spent since Monday", (11, 23), (11, 28), "since Monday", None),
        (
            "how much did i spend over the last 10 days",
            (11, 19),
            (11, 28),
            "over the last 10 days",
            None,
        ),
        (
            "How much did I spend on restaurants this week?",
            (11, 23),
            (11, 29),
            "this week",
            "restaurants",
        ),
        (
            "how much did i spend on eating out since march",
            (3, 1),
            (11, 28),
            "since March",
            "eating out",
        ),
        (
            "how much have i spent on shoes lately",
            (10, 30),
            (11, 28),
            "over the last 30 days",
            "shoes",
        ),
        (
            "could you tell me how much i've spent over the past two weeks",
            (11, 15),
            (11, 28),
            "over the last 2 weeks",
            None,
        ),
        ("whats my spending this wk?", (11, 23), (11, 29), "this week", None),
        ("how much did i spend on friday", (11, 27), (11, 27), "on Friday", None),
        ("how much did i spend", (11, 1), (11, 30), "this month", None),
        ("how much did i spend in total last weekend", (11, 21), (11, 22), "last weekend", None),
    ],
)
def test_the_named_window_and_category_are_read(
    asked: str,
    first: tuple[int, int],
    last: tuple[int, int],
    words: str,
    category: str | None,
) -> None:
    read = spending_asked(asked, NOW, ZONE)
    assert read is not None
    window = read.window
    assert (window.first, window.last) == (date(2026, *first), date(2026, *last))
    assert (window.words, read.category) == (words, category)


def test_a_month_not_yet_come_is_last_years() -> None:
    read = spending_asked("how much did i spend in december", NOW, ZONE)
    assert read is not None
    assert (read.window.first, read.window.last) == (date(2025, 12, 1), date(2025, 12, 31))


def test_the_week_is_the_users_own() -> None:
    """Sunday 23:30 in UTC is already Monday in Zurich: a new week there."""
    late = datetime(2026, 11, 29, 23, 30, tzinfo=UTC)
    read = spending_asked("how much did i spend this week", late, ZONE)
    assert read is not None and read.window.first == date(2026, 11, 30)
    read = spending_asked("how much did i spend this week", late, "America/New_York")
    assert read is not None and read.window.first == date(2026, 11, 23)


@pytest.mark.parametrize(
    "said",
    [
        "how much did i spend on my trip to rome",
        "how much did i spend on her birthday",
        "I spent 40 on food",
        "how much does a coffee cost",
        "how much did i spend in 2030",
        "how much did i spend since the 32nd",
        "how much did i spend over the last 5000 days",
        "how much did i spend" + " so far" * 3000,
        "how much did i spend on 🍕🍕🍕",
        "сколько я потратил на этой неделе",
    ],
)
def test_what_is_not_a_readable_spending_question_is_left_alone(said: str) -> None:
    assert spending_asked(said, NOW, ZONE) is None
