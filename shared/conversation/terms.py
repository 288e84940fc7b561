"""The terms of a text for the keyword channel: words folded, stop words out, stemmed.

A fact's terms are stored only as keyed hashes (``shared.crypto``), so this fold is part of
the blind index: a query finds a fact when both fold a word to the same term. Numbers stay
as written ("2023", "15" of "15th"); other words get the English Snowball stem ("hiking" ->
"hike"), which also leaves most German words usable. Changing the fold or the stemmer
changes every hash: stored facts must then be indexed again.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

import snowballstemmer

_TOKENS = re.compile(r"\d+|[^\W\d_]+")
MAX_TERMS = 64  # a fact has at most 200 characters; a summary is capped here

# Words that carry no meaning of their own in a question or a fact (English, German), and
# the pieces a split leaves behind ("15th", "Anna's").
_STOP = """
a about after again all also am an and any are as at be because been before being but by
can could did do does doing done during each few for from had has have having he her
here hers herself him himself his how i if in into is it its itself just me more most my
myself no nor not now of off on once only or other our ours out over own same she should
so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why
will with would you your yours yourself s t d ll m re ve st nd rd th der die das ein
eine einen einem einer und oder aber ich du er sie es wir ihr mein meine dein sein ihre
ist sind war waren hat haben hatte mit von zu im am um auf fur für nicht auch noch schon
wie was wer wann wo
"""
STOP_WORDS = frozenset(_STOP.split())


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    return snowballstemmer.stemmer("english")


def _plain(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def terms(text: str) -> list[str]:
    """The text's terms in order, repeats kept (term frequency counts them)."""
    words = [w for w in _TOKENS.findall(_plain(text)) if w not in STOP_WORDS]
    stems = _stemmer().stemWords([w for w in words if not w.isdigit()])
    found, letters = [], iter(stems)
    for word in words:
        found.append(word if word.isdigit() else next(letters))
    return [t for t in found if t and t not in STOP_WORDS][:MAX_TERMS]
