"""What the phone-first browser tests check on any page: horizontal overflow, axe-core's
WCAG 2.2 AA rules, visible internal words, and the app's installability."""

from __future__ import annotations

import json
import re
from typing import Any

from playwright.sync_api import Page

from tests.e2e.browser.conftest import ROOT

AXE = ROOT / "web" / "node_modules" / "axe-core" / "axe.min.js"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
_WORDS = json.loads((ROOT / "web" / "src" / "internal-words.json").read_text())
# Tool names and error codes are ours wherever they appear; an agent's name is ours where the
# server puts it ("productivity: ...", "(wealth)"), an ordinary word elsewhere.
_SNAKE = "|".join(re.escape(w) for w in [*_WORDS["tools"], *_WORDS["codes"]] if "_" in w)
_AGENTS = "|".join(re.escape(w) for w in _WORDS["agents"])
INTERNAL = re.compile(rf"\b({_SNAKE})\b|\b({_AGENTS})\s?:|\(({_AGENTS})[,)]", re.IGNORECASE)
RAW_FLOAT = re.compile(r"\b\d\.\d{4,}\b")
PHONES = [{"width": 360, "height": 740}, {"width": 390, "height": 844}]
DESKTOP = {"width": 1280, "height": 800}
VIEWPORTS = [*PHONES, DESKTOP]


def overflow(page: Page) -> tuple[int, int]:
    """The document's width and the window's: equal when nothing scrolls sideways."""
    sizes: list[int] = page.evaluate(
        "() => [document.documentElement.scrollWidth, window.innerWidth]"
    )
    return sizes[0], sizes[1]


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """axe-core's WCAG 2.2 AA violations on the page as it is (its id, help and the nodes)."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    result: dict[str, Any] = page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}})", AXE_TAGS
    )
    return [
        {
            "id": v["id"],
            "help": v["help"],
            "nodes": [n["target"] for n in v["nodes"]][:5],
        }
        for v in result["violations"]
    ]


def internal_words(page: Page) -> list[str]:
    """Words meant for us that the page shows (its visible text only)."""
    text: str = page.evaluate("() => document.body.innerText")
    found = [m.group(0) for m in INTERNAL.finditer(text)]
    return found + [m.group(0) for m in RAW_FLOAT.finditer(text)]


def small_targets(page: Page) -> list[str]:
    """Visible buttons, links and fields smaller than 44 x 44 CSS px (text links inside a
    sentence excepted, as WCAG 2.5.8 does; the skip link off screen until focused too)."""
    found: list[str] = page.evaluate(
        """() => [...document.querySelectorAll('button, a[href], input, select, textarea')]
          .filter(e => e.offsetParent !== null && e.type !== 'checkbox' && e.type !== 'radio')
          .filter(e => !(e.tagName === 'A' && getComputedStyle(e).display === 'inline'))
          .filter(e => {
            const r = e.getBoundingClientRect();
            return r.right > 0 && r.bottom > 0 && (r.width < 43.5 || r.height < 43.5);
          })
          .map(e => e.tagName + ' ' + (e.getAttribute('aria-label') || e.textContent).trim())"""
    )
    return found
