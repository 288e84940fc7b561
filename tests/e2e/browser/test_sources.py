"""A research answer grounded in web search, in the browser: its sources are links (https),
and Google's search suggestions are shown with it, isolated in a sandboxed frame. The fake
Vertex answers with Google's documented grounding example (testkit/vertex_grounding.py)."""

from __future__ import annotations

import pytest
from playwright.sync_api import BrowserContext, expect

from testkit.vertex_grounding import QUERIES, REDIRECT
from tests.e2e.browser.conftest import messages, send, sign_in
from tests.e2e.conftest import new_user

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


def test_a_grounded_answer_shows_its_sources_and_the_search_suggestions(
    phone: BrowserContext, web_url: str
) -> None:
    page = phone.new_page()
    sign_in(page, web_url, new_user())
    send(page, "[complex] [web] Who won the euro 2024?")
    answer = messages(page).locator(".message.assistant", has_text="Spain won Euro 2024")
    expect(answer).to_have_count(1, timeout=30_000)
    sources = answer.get_by_role("complementary", name="Sources")
    links = sources.get_by_role("link")
    expect(links).to_have_text(["aljazeera.com", "uefa.com"])
    expect(links.first).to_have_attribute("href", REDIRECT + "example-aljazeera")
    expect(links.first).to_have_attribute("target", "_blank")
    frame = sources.locator("iframe[title='Google Search suggestions']")
    expect(frame).to_have_attribute("sandbox", "allow-popups allow-popups-to-escape-sandbox")
    chips = sources.frame_locator("iframe").locator("a.chip")
    expect(chips).to_have_text(QUERIES)
