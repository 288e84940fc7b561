"""The one text fold: names, answers and fact texts are compared in this form, and a
person's name is hashed in it (``shared.crypto``), so a lookup by hash and a comparison
never disagree."""

from __future__ import annotations

import re
import unicodedata

_SPACES = re.compile(r"\s+")
_EDGES = re.compile(r"^[\W_]+|[\W_]+$")


def fold(text: str) -> str:
    """Case, accents, spacing and edge punctuation folded: "  Élise! " -> "elise"."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return fold_keeping_accents("".join(ch for ch in decomposed if not unicodedata.combining(ch)))


def fold_keeping_accents(text: str) -> str:
    """Like ``fold`` but keeping umlauts and accents, for word tables that spell them
    ("mutter", "ärztin"): "  Ärztin! " -> "ärztin"."""
    return _EDGES.sub("", _SPACES.sub(" ", text.casefold()).strip())
