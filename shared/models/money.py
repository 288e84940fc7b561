"""Money: ISO 4217 currency codes and exact amounts in minor units (cents, rappen, yen).

Amounts are stored as integers of the currency's minor unit, never as floats; the agents'
tools take decimal amounts and convert them here, refusing more decimals than the currency
has (``12.345 CHF`` is an error, not a rounding).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator

# Active ISO 4217 codes (funds and precious metals left out).
_CODES = """
AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN
BWP BYN BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD
FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY
KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP
MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR
RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT
TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR
ZMW ZWG
"""
CURRENCIES: frozenset[str] = frozenset(_CODES.split())
_NO_DECIMALS = "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX VND VUV XAF XOF XPF"
_THREE_DECIMALS = "BHD IQD JOD KWD LYD OMR TND"
_EXPONENT: dict[str, int] = {
    **dict.fromkeys(_NO_DECIMALS.split(), 0),
    **dict.fromkeys(_THREE_DECIMALS.split(), 3),
}
MAX_MINOR = 10**13  # 100 billion in a two-decimal currency: far above any personal figure


def _iso_code(value: str) -> str:
    if value not in CURRENCIES:
        raise ValueError(f"not an ISO 4217 currency code: {value!r}")
    return value


def _upper(value: object) -> object:
    return value.strip().upper() if isinstance(value, str) else value


Currency = Annotated[str, BeforeValidator(_upper), AfterValidator(_iso_code)]


def exponent(currency: str) -> int:
    """Decimals of the currency's minor unit (2 for CHF, 0 for JPY, 3 for KWD)."""
    return _EXPONENT.get(_iso_code(currency), 2)


def to_minor(amount: Decimal, currency: str) -> int:
    """``Decimal("12.30"), "CHF"`` -> 1230; ValueError for more decimals than the currency has."""
    scaled = amount.scaleb(exponent(currency))
    if not scaled.is_finite() or scaled != scaled.to_integral_value():
        raise ValueError(f"{currency} amounts have at most {exponent(currency)} decimals")
    minor = int(scaled)
    if abs(minor) > MAX_MINOR:
        raise ValueError("amount out of range")
    return minor


def to_major(minor: int, currency: str) -> Decimal:
    return Decimal(minor).scaleb(-exponent(currency))


def format_amount(minor: int, currency: str) -> str:
    """1230, "CHF" -> "12.30" (the figure as text, for the agents' results)."""
    return f"{to_major(minor, currency):.{exponent(currency)}f}"
