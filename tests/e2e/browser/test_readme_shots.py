"""The pictures of the web client in README.md and docs/web-client.md, phone and desktop,
taken on the local model (SmolLM2 behind the stack's model service, as `make dev` runs it;
no scripted markers): a reminder asked for and approved with a tap, an expense whose
currency is picked with a tap, both then in their views, and the reminder marked done there
(done in the API). Slow: the offline model answers in seconds per turn."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore
from playwright.sync_api import Browser, Page, expect

from shared.adapters.firestore_agent_data import FirestoreAgentDataStore
from shared.adapters.firestore_reminders import FirestoreReminderStore
from tests.e2e.browser.conftest import ROOT, go_to, messages, send, sign_in
from tests.e2e.browser.pwa_kit import DESKTOP, PHONES, axe_violations, internal_words, overflow
from tests.e2e.conftest import Served, new_user, wait_for
from tests.e2e.test_newcomer import on_local_model  # noqa: F401 - the fixture

pytestmark = [pytest.mark.e2e, pytest.mark.stack, pytest.mark.model]
IMG = ROOT / "docs" / "img"
ZONE = "Europe/Zurich"
SLOW = 180_000  # ms: a turn on the offline model


def shot(page: Page, name: str) -> None:
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.screenshot(path=str(IMG / name), animations="disabled", caret="hide")
    width, window = overflow(page)
    assert width == window and internal_words(page) == [] and axe_violations(page) == []


def tap_yes(page: Page, option: str = "Yes, go ahead") -> None:
    card = page.get_by_role("region", name="May I go ahead?")
    expect(card).to_be_visible(timeout=SLOW)
    card.get_by_role("button", name=option).tap()
    expect(card).to_have_count(0, timeout=SLOW)


@pytest.mark.timeout(1200)
def test_readme_pictures_on_the_local_model(
    on_local_model: Served,  # noqa: F811
    browser: Browser,
    web_url: str,
    db: firestore.Client,
) -> None:
    IMG.mkdir(parents=True, exist_ok=True)
    user = new_user()
    on_local_model.memory(user, "PATCH", "/v1/settings/assistant", {"timezone": ZONE})
    store = FirestoreAgentDataStore(db)
    phone = browser.new_context(viewport=PHONES[1], has_touch=True, is_mobile=True)
    page = phone.new_page()
    sign_in(page, web_url, user)

    send(page, "Remind me to call my mother Maria tomorrow at 10am")
    expect(page.get_by_role("region", name="May I go ahead?")).to_be_visible(timeout=SLOW)
    shot(page, "phone-chat-question.png")
    tap_yes(page)
    reminders = FirestoreReminderStore(db)
    [reminder] = wait_for(lambda: reminders.list_open(user, 5), seconds=180)
    assert "Maria" in reminder.text

    send(page, "I spent 42.50 on groceries")
    card = page.get_by_role("region", name="May I go ahead?")
    expect(card).to_be_visible(timeout=SLOW)
    card.get_by_role("button", name="CHF", exact=False).first.tap()
    now = datetime.now(UTC)
    day = timedelta(days=1)
    wait_for(lambda: store.list_expenses(user, now - day, now + day, 5), seconds=180)
    expect(messages(page).locator(".message.assistant:not(.live)").last).to_be_visible()

    go_to(page, "Money")
    expect(page.get_by_role("list", name="By category")).to_contain_text(
        "groceries", timeout=30_000
    )
    shot(page, "phone-money.png")
    go_to(page, "Reminders")
    view = page.get_by_role("region", name="Reminders")
    expect(view.locator(".thing-title")).to_contain_text(["Maria"])
    shot(page, "phone-reminders.png")
    view.get_by_role("button", name="Mark done", exact=False).first.tap()
    expect(view.locator(".thing")).to_have_count(0)
    done = on_local_model.api("GET", f"/v1/reminders/{reminder.id}", user).json()
    assert done["state"] == "done"
    phone.close()

    desktop = browser.new_context(viewport=DESKTOP)
    page = desktop.new_page()
    sign_in(page, web_url, user)
    chats = page.get_by_role("navigation", name="Chats")
    chats.get_by_role("listitem").first.get_by_role("button").click()
    expect(messages(page)).to_contain_text("Maria")
    shot(page, "desktop-chat.png")
    desktop.close()
    sizes = {p.name: p.stat().st_size for p in IMG.glob("*.png")}
    assert all(size < 200_000 for size in sizes.values()), sizes  # small in the README
