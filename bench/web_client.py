"""What the web client costs a phone: the size of its bundle and its time to interactive.

Sizes: every file of the built client (``web/dist``, ``npm run build`` in web/) the first
visit loads, raw and gzipped (what the wire carries), and the total against the budget of
docs/web-client.md. Time to interactive: Debian's Chromium opens the served client (the
functions on the test profile against the fake Vertex endpoint, as the e2e suite serves
them) until the sign-in field takes input, then signs in until the composer does; median
of ``--runs`` cold loads (a new browser context each), first on the machine as it is,
then as a slow phone: Chrome's "Slow 4G" (150 ms RTT, 1.6 Mbit/s down, 750 kbit/s up) and
a CPU slowed 4x.

    .venv/bin/python -m bench.web_client [--runs 5]

Needs ``scripts/stack up --profile test`` and the test profile's function ports free.
"""

from __future__ import annotations

import argparse
import gzip
import re
import shutil
import statistics
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, sync_playwright

from scripts import serve
from scripts.stacklib.profile import Profile
from testkit.model_rules import reply_for
from testkit.vertex_server import FakeVertexServer

PROFILE = "test"
DIST = Path(__file__).resolve().parents[1] / "web" / "dist"
BUDGET_GZIP_KB = 100  # the first visit's JS + CSS + HTML, gzipped (docs/web-client.md)
BUDGET_SLOW_TTI_MS = 3000  # sign-in field interactive on the slow phone
SLOW_4G = {
    "offline": False,
    "latency": 150,
    "downloadThroughput": 1.6e6 / 8,
    "uploadThroughput": 750e3 / 8,
}
FLAGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


def sizes() -> list[tuple[str, int, int]]:
    """(file, raw bytes, gzipped bytes) of what the first visit loads: the page and what it
    names (its entry script, preloaded modules, styles); chunks loaded later (Firebase's SDK,
    only when signing in with Firebase) are not counted."""
    page = (DIST / "index.html").read_text()
    named = sorted(set(re.findall(r'"/(assets/[^"]+\.(?:js|css))"', page)))
    files = [DIST / "index.html", *(DIST / name for name in named)]
    return [
        (f.relative_to(DIST).as_posix(), f.stat().st_size, len(gzip.compress(f.read_bytes(), 9)))
        for f in files
    ]


def _load(browser: Browser, url: str, slow: bool) -> tuple[float, float]:
    """ms from navigation to the sign-in field taking input, then from sign-in to the composer."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, service_workers="block")
    page = context.new_page()
    if slow:
        cdp = page.context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.emulateNetworkConditions", SLOW_4G)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 4})
    page.goto(url, wait_until="commit")
    page.get_by_label("User name").wait_for(state="visible", timeout=60_000)
    shell: float = page.evaluate("() => performance.now()")
    page.get_by_label("User name").fill("bench-web-client")
    started: float = page.evaluate("() => performance.now()")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("textbox", name="Message", exact=True).wait_for(
        state="visible", timeout=60_000
    )
    signed_in: float = page.evaluate("() => performance.now()") - started
    context.close()
    return shell, signed_in


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    if not (DIST / "index.html").exists():
        raise SystemExit("web/dist is missing: npm run build in web/")
    listed = sizes()
    print(f"{'file':<40} {'raw KB':>8} {'gzip KB':>8}")
    for name, raw, packed in listed:
        print(f"{name:<40} {raw / 1024:>8.1f} {packed / 1024:>8.1f}")
    total = sum(p for _, _, p in listed) / 1024
    raw = sum(r for _, r, _ in listed) / 1024
    verdict = "ok" if total <= BUDGET_GZIP_KB else "OVER"
    print(
        f"{'first visit, total':<40} {raw:>8.1f} {total:>8.1f}"
        f"   budget {BUDGET_GZIP_KB} KB: {verdict}"
    )
    wire_ms = total * 1024 / SLOW_4G["downloadThroughput"] * 1000 + 4 * SLOW_4G["latency"]
    print(f"on Slow 4G the bytes alone take ~{wire_ms:.0f} ms (4 round trips + {total:.0f} KB)")

    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("Debian's chromium is missing: scripts/bootstrap.sh installs it")
    model = FakeVertexServer(token="bench-static-token", fallback=reply_for).start()
    extra = {"MODEL_PROVIDER": "vertex", "VERTEX_BASE_URL": model.base_url,
             "VERTEX_ACCESS_TOKEN": model.token, "LOG_LEVEL": "WARNING"}  # fmt: skip
    serve.down(PROFILE)
    serve.up(PROFILE, extra_env=extra)
    try:
        url = Profile(PROFILE).url("web")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=FLAGS)
            _load(browser, url, slow=False)  # warm the functions' first requests
            print(f"\ntime to interactive, median of {runs} cold loads at 390x844; ms")
            print(f"{'conditions':<22} {'sign-in field':>14} {'signed in -> composer':>22}")
            for label, slow in (("this machine", False), ("Slow 4G, CPU / 4", True)):
                times: list[Any] = [_load(browser, url, slow) for _ in range(runs)]
                shell = statistics.median(t[0] for t in times)
                chat = statistics.median(t[1] for t in times)
                verdict = (
                    ""
                    if not slow
                    else f"   budget {BUDGET_SLOW_TTI_MS} ms: "
                    + ("ok" if shell <= BUDGET_SLOW_TTI_MS else "OVER")
                )
                print(f"{label:<22} {shell:>14.0f} {chat:>22.0f}{verdict}")
            browser.close()
    finally:
        serve.down(PROFILE)
        model.stop()


if __name__ == "__main__":
    main()
