"""The currencies a user most likely means when an amount names none.

The time zone's territory's legal tender comes first (CLDR data, through Babel: Europe/Zurich
is CH, whose tender is CHF), then the most traded currencies. An amount with more decimals
than a currency has ("42.50" in JPY) never offers that currency.
"""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache

from shared.models.money import CURRENCIES, to_minor

MOST_TRADED = ("USD", "EUR", "GBP", "JPY", "CHF")
MAX_CHOICES = 4


def likely_currencies(timezone: str, amount: Decimal) -> list[str]:
    ordered = dict.fromkeys([*_tender(timezone), *MOST_TRADED])
    return [code for code in ordered if code in CURRENCIES and _exact(amount, code)][:MAX_CHOICES]


def currency_label(code: str) -> str:
    """``CHF (Swiss Franc)``: the code a user may type, and the name they may say."""
    from babel.numbers import get_currency_name

    return f"{code} ({get_currency_name(code, locale='en')})"


@lru_cache(maxsize=64)
def _tender(timezone: str) -> tuple[str, ...]:
    from babel.core import get_global
    from babel.numbers import get_territory_currencies

    territory = get_global("zone_territories").get(timezone)
    if not territory or territory == "ZZ":  # UTC and the like: no country
        return ()
    return tuple(get_territory_currencies(territory, tender=True))


def _exact(amount: Decimal, code: str) -> bool:
    try:
        to_minor(amount, code)
    except ValueError:
        return False
    return True
