"""Place names typed in lower case, written as names are: "Anna lives in berlin" is stored
as "Anna lives in Berlin".

A lowercase word is capitalised only when the rules are sure it names a place: it stands
where a place does (after "in", "to", "from", "near" ...; "paris called me" is a person; a
"to" before a word spaCy takes for a verb counts: "been to lisbon"), it is in the gazetteer
(``places.tsv.gz``: GeoNames' cities of 15,000 people or more, countries, continents and
US states, CC BY 4.0, built by scripts/gazetteer.py), and it is no common word there: no
article or adjective before it ("the bank"), not a verb, adjective or adverb to WordNet
("nice", "mobile", "been to work" stay as typed).
"""

from __future__ import annotations

import gzip
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

from shared.understanding.casual_names import common_word

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

_WHERE = frozenset({"in", "to", "from", "near", "around", "outside", "into", "via", "at"})
MAX_WORDS = 3  # "new york", "rio de janeiro"


@lru_cache(maxsize=1)
def gazetteer() -> dict[str, str]:
    """Folded name -> the name as written ("napoli" -> "Napoli")."""
    data = resources.files("shared.understanding").joinpath("places.tsv.gz").read_bytes()
    lines = gzip.decompress(data).decode("utf-8").splitlines()
    return dict(line.split("\t", 1) for line in lines if "\t" in line)


def place_names(span: Span) -> dict[int, str]:
    """Token index -> how the place it belongs to is written, for each lowercase place name
    the rules are sure of in ``span``."""
    written: dict[int, str] = {}
    for token in span:
        if token.i in written or not _where_a_place_stands(token):
            continue
        found = _longest_name(token)
        if found is None:
            continue
        first, name = found
        for index, word in zip(range(first, token.i + 1), name.split(), strict=False):
            written[index] = word
    return written


def written(span: Span, names: dict[int, str] | None = None) -> str:
    """``span``'s text with its lowercase place names written as names."""
    names = place_names(span) if names is None else names
    return "".join(names.get(t.i, t.text) + t.whitespace_ for t in span).strip()


def sure_place(token: Token) -> bool:
    return token.i in place_names(token.doc[token.i : token.i + 1])


def _where_a_place_stands(token: Token) -> bool:
    if not (token.is_lower and token.is_alpha) or token.is_stop:
        return False
    if any(c.dep_ in ("det", "amod", "poss", "nummod") for c in token.children):
        return False  # "the bank", "a nice park", "my office"
    if token.dep_ == "pobj" and token.head.lower_ in _WHERE:
        return True
    # "i've been to lisbon": spaCy reads "to lisbon" as an infinitive, the place as its verb;
    # the gazetteer and WordNet then tell "lisbon" from "work" ("been to work")
    before = token.doc[token.i - 1] if token.i else None
    infinitive = before is not None and before.lower_ == "to" and before.head.i == token.i
    return infinitive and token.tag_ == "VB"


def _longest_name(last: Token) -> tuple[int, str] | None:
    """The longest gazetteer name ending at ``last`` ("new york"), words all lowercase."""
    doc = last.doc
    places = gazetteer()
    for size in range(MAX_WORDS, 0, -1):
        first = last.i - size + 1
        if first < 0:
            continue
        words = doc[first : last.i + 1]
        if not all(t.is_lower and (t.is_alpha or t.text == "-") for t in words):
            continue
        before = doc[first - 1] if first > 0 else None
        if size > 1 and before is not None and before.is_lower and before.lower_ not in _WHERE:
            continue  # the name must start where the place phrase does
        name = places.get(words.text.casefold())
        if name is None:
            continue
        if size == 1 and common_word(last.lower_):
            return None
        return first, name
    return None
