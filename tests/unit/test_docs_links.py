"""The docs name only what exists: every relative link (and its #anchor) in README.md and
docs/*.md resolves, and every `make` target, script, path and `python -m` module they name
in code is in the repository. A page moved or a script renamed fails here, not on a reader.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.S | re.M)
CODE_SPAN = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HTML_REF = re.compile(r"""<(?:img|a)\s[^>]*?(?:src|href)="([^"]+)\"""")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
MAKE = re.compile(r"(?<![\w./-])make\s+([a-z][a-z-]*)")
MODULE = re.compile(r"python\s+-m\s+([A-Za-z_][\w.]*)|(?<![\w./-])(bench\.[a-z_]+)")
# Repository paths named in code: the top-level folders that hold code, tests and data.
PATH = re.compile(
    r"(?<![\w./-])((?:scripts|shared|tests|testkit|bench|eval|functions|terraform|web|docs)"
    r"/[\w./-]*)"
)
# Named in the docs but made by a command, never committed.
GENERATED = {"web/src/api/schema.d.ts"}


def _page_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _prose(text: str) -> str:
    """The page without fenced blocks and code spans: what a renderer turns into links."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def _code(text: str) -> list[str]:
    """Every code span and fenced block of the page: where commands and paths are named."""
    return [m.group(0) for m in FENCE.finditer(text)] + CODE_SPAN.findall(FENCE.sub("", text))


def _slugs(markdown: str) -> set[str]:
    """Anchors of a page's headings, as Python-Markdown (the site) and GitHub make them."""
    slugs: set[str] = set()
    for heading in HEADING.findall(FENCE.sub("", markdown)):
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
        folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
        site = re.sub(r"[^\w\s-]", "", folded).strip().lower()
        slugs.add(re.sub(r"[-\s]+", "-", site))
        github = re.sub(r"[^\w\- ]", "", text.strip().lower())
        slugs.add(github.replace(" ", "-"))
    return slugs


def _links(page: Path) -> list[str]:
    text = page.read_text()
    prose = _prose(text)
    return LINK.findall(prose) + HTML_REF.findall(prose)


def _broken_link(page: Path, target: str) -> str | None:
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
        return None
    file_part, _, anchor = target.partition("#")
    resolved = (page.parent / file_part).resolve() if file_part else page
    if not resolved.exists():
        return f"{target}: no such file"
    if anchor and resolved.suffix == ".md" and anchor not in _slugs(resolved.read_text()):
        return f"{target}: no heading #{anchor} in {resolved.relative_to(ROOT)}"
    return None


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_relative_link_resolves(page: Path) -> None:
    broken = [b for t in _links(page) if (b := _broken_link(page, t))]
    assert not broken, broken


def _make_targets() -> set[str]:
    makefile = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^([a-z][a-z-]*):", makefile, re.M))


def _module_exists(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _path_exists(named: str) -> bool:
    if re.search(r"[<>*{}]|\.\.\.|…", named):  # a pattern (functions/<name>/), not a path
        return True
    path = named.split(":", maxsplit=1)[0].rstrip(".,;)")
    return path in GENERATED or (ROOT / path).exists()


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_command_and_path_named_exists(page: Path) -> None:
    code = _code(page.read_text())
    targets = _make_targets()
    missing = [f"make {t}" for c in code for t in MAKE.findall(c) if t not in targets]
    for chunk in code:
        for module in (a or b for a, b in MODULE.findall(chunk)):
            ours = module.split(".")[0] in {"bench", "scripts", "eval", "testkit"}
            if ours and not _module_exists(module.rstrip(".")):
                missing.append(f"python -m {module}")
        missing += [p for p in PATH.findall(chunk) if not _path_exists(p)]
    assert not missing, missing


def test_the_readme_links_every_page_and_shows_the_sites_diagram() -> None:
    """The README is the front door: no page is out of its reach, and the site's home shows
    the same picture of the system."""
    readme = (ROOT / "README.md").read_text()
    unlinked = [
        p.name for p in PAGES[1:] if f"(docs/{p.name})" not in readme and p.name != "index.md"
    ]
    assert not unlinked, unlinked
    index = (ROOT / "docs" / "index.md").read_text()
    diagram = re.compile(r"^```mermaid\n.*?^```$", re.S | re.M)
    assert diagram.findall(readme) == diagram.findall(index)


def test_the_checks_can_fail() -> None:
    """The helpers above catch what they exist for (a test that cannot fail proves nothing)."""
    page = ROOT / "docs" / "architecture.md"
    assert _broken_link(page, "nowhere.md") is not None
    assert _broken_link(page, "memory.md#no-such-heading") is not None
    assert _broken_link(page, "memory.md") is None
    assert not _path_exists("scripts/no_such_script.py")
    assert not _module_exists("bench.no_such_bench")
    assert "no-such-target" not in _make_targets()
    assert _slugs("## `make dev` and `make test`\n") >= {"make-dev-and-make-test"}
