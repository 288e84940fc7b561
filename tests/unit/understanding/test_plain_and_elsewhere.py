"""Routes a plain sentence settles (plain.py), and requests of domains we keep no records
for that must never become an agent's job (records.py, ``ELSEWHERE``). Our own wordings."""

from __future__ import annotations

import pytest

from shared.understanding.tier import Context, UnderstandingTier

ACTIONS = ("schedule", "notes", "email", "budget")


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("what's the deepest lake in switzerland", "research"),
        ("how do i get candle wax off a tablecloth?", "research"),
        ("my neighbour greta moved to lyon in the spring", "statement"),
        ("we finally painted the kitchen yellow.", "statement"),
    ],
)
def test_a_plain_question_or_telling_is_decided(
    tier: UnderstandingTier, context: Context, text: str, label: str
) -> None:
    route = tier.understand(text, context).route
    assert (route.label, route.guessed) == (label, False)


@pytest.mark.parametrize(
    "text",
    [
        "I need to renew my passport before march",  # a duty: maybe a reminder
        "we should invite the Bauers over soon",  # a plan
        "how are things with you",  # to the assistant
        "is the bakery open on sundays",  # a yes/no question without its mark
        "I'm so grateful for the help earlier",  # thanks
        "what did I spend on groceries",  # the budget's records
    ],
)
def test_a_sentence_with_a_wish_a_record_or_the_assistant_is_not_plain(
    tier: UnderstandingTier, context: Context, text: str
) -> None:
    assert "plain" not in tier.understand(text, context).route.reason


@pytest.mark.parametrize(
    "text",
    [
        "book a room for two at a hotel in Basel this weekend",
        "can you get me a cab to the train station",
        "schedule a tyre change for my car",
        "how much cash do I have in my savings account",
        "what's the exchange rate from francs to pounds",
        "reserve a table at the ramen place for 7",
        # another domain's records named, even with a word of ours ("spent", "calendar")
        "how many of my holiday days have i spent so far",
        "what's the most i can put on my visa",
        "is my table reservation on the calendar for 8",
        "please tell me how much i spent on my mastercard this week",  # a bank's "spent"
        "tell me the dollar total i spent on my credit card",  # a currency word, no amount
        # asks to be told now, not reminded later
        "remind me of the pin for my debit card",
        "can you remind me how to pronounce worcestershire",
        # a question to the assistant about itself
        "how do you spend your weekends?",
    ],
)
@pytest.mark.parametrize("guess", [False, True])
def test_another_domains_request_is_no_agents_job(
    tier: UnderstandingTier, context: Context, text: str, guess: bool
) -> None:
    assert tier.understand(text, context, guess=guess).route.label not in ACTIONS


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("What did I write about the trip to Rome?", "notes"),  # near travel, but notes
        ("put the flight to Lisbon in my calendar on Friday at 9am", "schedule"),
        ("I paid 40 francs for the hotel", "budget"),  # an amount: an expense of ours
        ("remind me of the dentist appointment next week", "schedule"),  # the calendar's
        ("remind me of this later", "schedule"),
    ],
)
def test_naming_its_own_records_outweighs_another_domain(
    tier: UnderstandingTier, context: Context, text: str, label: str
) -> None:
    assert tier.understand(text, context, guess=True).route.label == label
