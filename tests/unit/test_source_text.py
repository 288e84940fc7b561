"""The code states its rules: no pointer to a document a reader of the code does not have
(a design seed, a section number, an issue), which would leave the rule unsaid."""

from __future__ import annotations

import re
from pathlib import Path

# "seed 001", "the seed's", a section such as "15.12.2", "the list", "issue 4"
CITATION = re.compile(
    r"\bseeds? \d{3}|\bseed's\b|\b\d{2}\.\d{2}\.\d\b|\bthe issue\b|\bissue \d+", re.I
)


def test_no_docstring_or_comment_in_the_code_cites_an_outside_document() -> None:
    sources = sorted([*Path("shared").rglob("*.py"), *Path("functions").rglob("*.py")])
    assert len(sources) > 100
    cited = [
        f"{path}:{number}: {line.strip()}"
        for path in sources
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if CITATION.search(line)
    ]
    assert cited == []
