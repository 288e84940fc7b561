"""The web client in Debian's Chromium, driven by Playwright, against the served functions.

The client is the production build (``web/dist``, made by ``make test``), served with the
API on one origin by ``scripts/web_serve.py``, which ``scripts/serve.py up`` starts beside
the functions (the ``served`` fixture). Playwright's own browser download cannot be had
here: the system Chromium is launched with flags that keep it off the network. A failing
test leaves a screenshot of every open page in ``test-results/browser/``.
"""

from __future__ import annotations

import re
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from scripts.stacklib.profile import Profile
from shared.models.memory import Person
from tests.e2e.conftest import Served
from tests.e2e.test_turn_graph_over_http import _stores

ROOT = Path(__file__).resolve().parents[3]
FAILURES = ROOT / "test-results" / "browser"
PHONE = {"width": 390, "height": 844}
# A function's first request in a fresh process is slow (imports, clients, the graph).
expect.set_options(timeout=20_000)
# Without the background-networking flags Chromium keeps calling Google's hosts, which the
# closed network refuses; root needs --no-sandbox.
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.fail("Debian's chromium is missing: scripts/bootstrap.sh installs it")
    return {**browser_type_launch_args, "executable_path": chromium, "args": CHROMIUM_FLAGS}


@pytest.fixture(scope="session")
def web_url(served: Served) -> str:
    if not (ROOT / "web" / "dist" / "index.html").exists():
        pytest.fail("the web client is not built: `make test` builds it (npm run build in web/)")
    return Profile("test").url("web")


@pytest.fixture
def phone(browser: Browser) -> Iterator[BrowserContext]:
    """A phone-sized browser with downloads allowed (each test its own, so no state leaks)."""
    context = browser.new_context(viewport=PHONE, accept_downloads=True, has_touch=True)
    yield context
    context.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.when == "call" and report.failed:
        _screenshots(item)
    return report


def _screenshots(item: pytest.Item) -> None:
    browser = item.funcargs.get("browser") if hasattr(item, "funcargs") else None
    if browser is None:
        return
    FAILURES.mkdir(parents=True, exist_ok=True)
    name = re.sub(r"[^\w.-]", "_", item.name)
    pages = [page for context in browser.contexts for page in context.pages]
    for number, page in enumerate(pages):
        path = FAILURES / f"{name}-{number}.png"
        page.screenshot(path=str(path), full_page=True)
        item.add_report_section("call", "screenshot", str(path))


def sign_in(page: Page, web_url: str, user: str) -> None:
    page.goto(web_url)
    page.get_by_label("User name").fill(user)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("textbox", name="Message", exact=True)).to_be_visible()


def go_to(page: Page, section: str) -> None:
    """Open a section from the drawer (behind the menu button on a phone)."""
    open_chats(page)  # the drawer, open
    page.get_by_role("navigation", name="Sections").get_by_role("link", name=section).click()


def open_chats(page: Page) -> Any:
    """The chat list, the drawer opened first on a phone."""
    menu = page.get_by_role("button", name="Menu")
    if menu.is_visible() and menu.get_attribute("aria-expanded") != "true":
        menu.click()
    return page.get_by_role("navigation", name="Chats")


def send(page: Page, text: str) -> None:
    box = page.get_by_role("textbox", name="Message", exact=True)
    box.fill(text)
    box.press("Enter")


def messages(page: Page) -> Any:
    return page.get_by_role("log", name="Messages")


def seed_thomases(user: str) -> dict[str, str]:
    """Two persons named Thomas, a colleague and a sibling, listed in that order (namesakes
    are ordered by id), so the question's options and its screenshot are the same each run."""
    db, contacts, _ = _stores()
    colleague, sibling = sorted(str(uuid.uuid4()) for _ in range(2))
    ids = {"colleague": colleague, "sibling": sibling}
    try:
        for role, person_id in ids.items():
            contacts.add_person(
                Person(id=person_id, user_id=user, display_name="Thomas", role_to_user=role)
            )
    finally:
        db.close()
    return ids
