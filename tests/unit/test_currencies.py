"""The currencies offered when an amount names none (shared/conversation/currencies.py)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from shared.conversation.currencies import MAX_CHOICES, currency_label, likely_currencies


@pytest.mark.parametrize(
    ("zone", "first"),
    [("Europe/Zurich", "CHF"), ("Europe/Berlin", "EUR"), ("America/Chicago", "USD"),
     ("Asia/Tokyo", "JPY"), ("Europe/London", "GBP"), ("Asia/Kolkata", "INR")],
)  # fmt: skip
def test_the_zones_country_comes_first(zone: str, first: str) -> None:
    offered = likely_currencies(zone, Decimal("40"))
    assert offered[0] == first and len(offered) == MAX_CHOICES == len(set(offered))


def test_a_zone_without_a_country_offers_the_most_traded() -> None:
    assert likely_currencies("UTC", Decimal("40")) == ["USD", "EUR", "GBP", "JPY"]


def test_an_amount_a_currency_cannot_hold_leaves_it_out() -> None:
    assert "JPY" not in likely_currencies("Asia/Tokyo", Decimal("42.50"))
    assert likely_currencies("Europe/Zurich", Decimal("1.234")) == []


def test_the_label_has_the_code_and_the_name() -> None:
    assert currency_label("EUR") == "EUR (Euro)"
