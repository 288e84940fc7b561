"""The client as a phone's app: one column that never scrolls sideways from 360 to 1280 px,
the composer in view, a question answered with a tap, 0 axe-core violations (WCAG 2.2 AA)
on every screen, no internal words on screen, and installable (manifest, service worker)."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.browser.conftest import go_to, messages, send, sign_in
from tests.e2e.browser.pwa_kit import (
    DESKTOP,
    PHONES,
    VIEWPORTS,
    axe_violations,
    internal_words,
    overflow,
    small_targets,
)
from tests.e2e.conftest import new_user

pytestmark = [pytest.mark.e2e, pytest.mark.stack]
SECTIONS = ["Inbox", "Reminders", "Calendar", "Notes", "Money", "Memory & settings"]


def context_for(browser: Browser, viewport: dict[str, int], scheme: str = "light") -> Any:
    phone = viewport["width"] < 640
    return browser.new_context(
        viewport=viewport,
        has_touch=phone,
        is_mobile=phone,
        color_scheme=scheme,  # type: ignore[arg-type]
    )


def screen_is_clean(page: Page, where: str) -> None:
    width, window = overflow(page)
    assert width == window, f"{where}: the document is {width} px wide in a {window} px window"
    assert axe_violations(page) == [], where
    assert internal_words(page) == [], where
    assert small_targets(page) == [], where


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=lambda v: f"{v['width']}x{v['height']}")
def test_an_approval_is_answered_with_a_tap_and_nothing_scrolls_sideways(
    browser: Browser, web_url: str, viewport: dict[str, int]
) -> None:
    context = context_for(browser, viewport)
    page = context.new_page()
    sign_in(page, web_url, new_user())
    send(page, "[act] Email Bea the itinerary for Rome " + "and-a-very-long-word" * 8)
    plan = page.get_by_role("region", name="May I go ahead?")
    expect(plan).to_be_visible()
    composer = page.get_by_role("textbox", name="Message", exact=True)
    expect(composer).to_be_in_viewport()
    expect(page.get_by_role("button", name="Send")).to_be_in_viewport()
    # Asked once: the card has the question, the log a short line.
    expect(messages(page).get_by_text("Asked: May I go ahead?")).to_have_count(1)
    expect(messages(page)).not_to_contain_text("Shall I go ahead")
    screen_is_clean(page, "chat with a question")

    yes = plan.get_by_role("button", name="Yes, go ahead")
    if viewport["width"] < 640:
        yes.tap()
    else:
        yes.click()
    ask_mail = page.get_by_role("region", name="May I go ahead?")
    expect(ask_mail).to_contain_text("may I send this email?", timeout=30_000)
    screen_is_clean(page, "chat with a task and its question")
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [PHONES[0], DESKTOP], ids=["phone", "desktop"])
def test_every_section_is_clean_and_reachable_by_keyboard(
    browser: Browser, web_url: str, viewport: dict[str, int], scheme: str
) -> None:
    context = context_for(browser, viewport, scheme)
    page = context.new_page()
    sign_in(page, web_url, new_user())
    screen_is_clean(page, "an empty chat")
    for section in SECTIONS:
        go_to(page, section)
        heading = "Memory" if section.startswith("Memory") else section
        if heading != "Memory":
            expect(page.get_by_role("heading", level=1, name=heading)).to_be_visible()
        else:
            expect(page.get_by_role("region", name="People")).to_be_visible()
        page.wait_for_load_state("networkidle")
        screen_is_clean(page, section)
    context.close()


def test_the_drawer_works_with_the_keyboard_alone(browser: Browser, web_url: str) -> None:
    context = context_for(browser, PHONES[1])
    page = context.new_page()
    sign_in(page, web_url, new_user())
    menu = page.get_by_role("button", name="Menu")
    menu.focus()
    page.keyboard.press("Enter")
    expect(menu).to_have_attribute("aria-expanded", "true")
    sections = page.get_by_role("navigation", name="Sections")
    expect(sections.get_by_role("link", name="Chat", exact=True)).to_be_focused()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(sections.get_by_role("link", name="Reminders")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=1, name="Reminders")).to_be_visible()
    expect(page).to_have_url(re.compile(r"#reminders$"))
    menu.focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(menu).to_be_focused()  # back where the keyboard was
    context.close()


def test_the_app_is_installable(browser: Browser, web_url: str) -> None:
    context = context_for(browser, PHONES[1])
    page = context.new_page()
    page.goto(web_url)
    href = page.locator("link[rel=manifest]").get_attribute("href")
    assert href is not None
    manifest = httpx.get(web_url.rstrip("/") + href).json()
    assert manifest["name"] and manifest["short_name"] and manifest["start_url"] == "/"
    assert manifest["display"] in ("standalone", "fullscreen", "minimal-ui")
    sizes = {icon["sizes"]: icon for icon in manifest["icons"] if icon["type"] == "image/png"}
    assert {"192x192", "512x512"} <= set(sizes)
    for icon in sizes.values():
        png = httpx.get(web_url.rstrip("/") + icon["src"])
        assert png.status_code == 200 and png.content.startswith(b"\x89PNG")
        width, height = int.from_bytes(png.content[16:20]), int.from_bytes(png.content[20:24])
        assert f"{width}x{height}" == icon["sizes"]
    state = page.evaluate(
        "() => navigator.serviceWorker.ready.then(r => r.active && r.active.state)"
    )
    assert state == "activated"
    context.close()


def test_offline_the_shell_opens_and_no_api_answer_was_kept(browser: Browser, web_url: str) -> None:
    context = context_for(browser, PHONES[1])
    page = context.new_page()
    sign_in(page, web_url, new_user())
    page.evaluate("() => navigator.serviceWorker.ready")
    page.reload()  # now under the worker's control
    expect(page.get_by_role("textbox", name="Message", exact=True)).to_be_visible()
    cached: list[str] = page.evaluate(
        """async () => { const urls = [];
          for (const name of await caches.keys()) {
            const cache = await caches.open(name);
            for (const r of await cache.keys()) urls.push(new URL(r.url).pathname);
          } return urls; }"""
    )
    assert "/offline.html" in cached
    assert not [url for url in cached if url.startswith("/v1/")], cached
    context.set_offline(True)
    page.reload()
    expect(page.locator("#root")).to_be_attached()  # the cached shell, not the browser's error
    assert page.title() != ""
    context.set_offline(False)
    context.close()


def test_no_width_from_320_to_1440_scrolls_sideways(browser: Browser, web_url: str) -> None:
    context = browser.new_context(viewport={"width": 320, "height": 640})
    page = context.new_page()
    sign_in(page, web_url, new_user())
    send(page, "[act] Email Bea the itinerary for Rome")
    expect(page.get_by_role("region", name="May I go ahead?")).to_be_visible()
    for section in ["Chat", *SECTIONS]:
        page.set_viewport_size({"width": 1280, "height": 800})
        go_to(page, section)
        for width in (320, 375, 480, 639, 640, 800, 1024, 1440):
            page.set_viewport_size({"width": width, "height": 800})
            scroll, window = overflow(page)
            assert scroll == window, f"{section} at {width} px: {scroll} px wide"
    context.close()
