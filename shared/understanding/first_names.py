"""Known first names, a soft signal only: a lowercase word right after a relation word
("my niece lily") or set apart beside one ("a friend of mine, pablo") is taken for a name
when it is one of them. Never a list on its own: "hope", "will" or "rose" are names and
words, so the word's place and part of speech decide first (casual_names.py).

The lists are the US Census 1990 first names (public domain) as shipped by the ``names``
package (treyhunner/names, MIT): ``dist.male.first`` and ``dist.female.first``, one name a
line with its frequency. Read once, on first use (about 5,000 names).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

_FILES = ("dist.male.first", "dist.female.first")


@lru_cache(maxsize=1)
def first_names() -> frozenset[str]:
    package = resources.files("names")
    known: set[str] = set()
    for name in _FILES:
        for line in package.joinpath(name).read_text(encoding="ascii").splitlines():
            word = line.split(maxsplit=1)[0] if line.strip() else ""
            if word.isalpha():
                known.add(word.casefold())
    return frozenset(known)


def is_first_name(word: str) -> bool:
    return word.casefold() in first_names()


@lru_cache(maxsize=1)
def _by_gender() -> dict[str, frozenset[str]]:
    package = resources.files("names")
    return {
        gender: frozenset(
            line.split(maxsplit=1)[0].casefold()
            for line in package.joinpath(name).read_text(encoding="ascii").splitlines()
            if line.strip()
        )
        for gender, name in zip(("m", "f"), _FILES, strict=True)
    }


def name_gender(name: str) -> str | None:
    """ "m" or "f" for a first name on one of the two lists only; None when on both or none
    ("Jordan", "Kim"): a soft signal, to rule out, never to decide."""
    first = name.split(maxsplit=1)[0].casefold() if name.strip() else ""
    found = [g for g, names in _by_gender().items() if first in names]
    return found[0] if len(found) == 1 else None
