"""The user's things in their views, in a real browser on the served functions: a reminder
said in the chat shows under Reminders, edited and marked done there, as the API then says;
an expense said in the chat shows under Money against its budget; calendar entries by day
and week in the user's zone, moved there; notes found by a word and edited; each deleted
from its view is gone from the API; a finished task reaches the inbox."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from google.cloud import firestore
from playwright.sync_api import BrowserContext, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from shared.adapters.firestore_agent_data import FirestoreAgentDataStore
from shared.models.agent_data import Budget, CalendarEvent, Note
from tests.e2e.browser.conftest import go_to, send, sign_in
from tests.e2e.browser.pwa_kit import axe_violations, internal_words
from tests.e2e.conftest import Served, new_user, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.stack]
ZONE = "Europe/Zurich"


def approve_each_ask(page: Page) -> None:
    """Tap yes on each approval asked (the plan, then the job's step: the user's trust level
    decides), quickly: an approval left open expires in the e2e profile's 8 s."""
    for _ in range(3):
        card = page.get_by_role("region", name="May I go ahead?")
        try:
            card.wait_for(timeout=6_000)
        except PlaywrightTimeout:  # nothing (more) asked
            return
        card.get_by_role("button", name="Yes, go ahead").tap()
        expect(card).to_have_count(0)


def test_a_reminder_said_in_the_chat_is_marked_done_in_its_view(
    phone: BrowserContext, web_url: str, served: Served
) -> None:
    user = new_user()
    served.memory(user, "PATCH", "/v1/settings/assistant", {"timezone": ZONE})
    page = phone.new_page()
    sign_in(page, web_url, user)
    send(page, "[remind] Remind me to water the plants")
    approve_each_ask(page)

    def open_reminders() -> list[dict[str, object]]:
        found: list[dict[str, object]] = served.api("GET", "/v1/reminders", user).json()[
            "reminders"
        ]
        return found

    [made] = wait_for(open_reminders, 60)
    go_to(page, "Reminders")
    view = page.get_by_role("region", name="Reminders")
    expect(view.locator(".thing-title")).to_have_text(["water the plants"])
    expect(view).to_contain_text("Due ")
    assert axe_violations(page) == []
    view.get_by_role("button", name="Edit: water the plants").tap()
    tomorrow = datetime.now(ZoneInfo(ZONE)).date() + timedelta(days=1)
    view.get_by_label("What").fill("water the ferns")
    view.get_by_label("When", exact=False).fill(f"{tomorrow.isoformat()}T18:30")
    view.get_by_role("button", name="Save").tap()
    expect(view.locator(".thing-title")).to_have_text(["water the ferns"])
    edited = served.api("GET", f"/v1/reminders/{made['id']}", user).json()
    due = datetime.fromisoformat(edited["due_at"])
    assert edited["text"] == "water the ferns"
    assert due == datetime(
        tomorrow.year, tomorrow.month, tomorrow.day, 18, 30, tzinfo=ZoneInfo(ZONE)
    )
    view.get_by_role("button", name="Mark done: water the ferns").tap()
    expect(view.locator(".thing")).to_have_count(0)
    got = served.api("GET", f"/v1/reminders/{made['id']}", user).json()
    assert (got["state"], got["completed_at"] is not None) == ("done", True)
    page.get_by_role("button", name="Done", exact=True).click()
    expect(view.locator(".thing-title")).to_have_text(["water the ferns"])


def test_a_finished_task_reaches_the_inbox_in_plain_words(
    phone: BrowserContext, web_url: str, served: Served
) -> None:
    user = new_user()
    page = phone.new_page()
    sign_in(page, web_url, user)
    send(page, "[remind] Remind me to book the dentist")
    approve_each_ask(page)

    def unread() -> list[dict[str, object]]:
        query = {"filter": "unread"}
        found: list[dict[str, object]] = served.api(
            "GET", "/v1/notifications", user, params=query
        ).json()["notifications"]
        return found

    wait_for(unread, 60)  # the job's "done"
    go_to(page, "Inbox")
    inbox = page.get_by_role("region", name="Inbox")
    expect(inbox.locator(".thing.unread")).not_to_have_count(0)
    assert internal_words(page) == [] and axe_violations(page) == []
    page.get_by_role("button", name="Mark all read").click()
    expect(inbox.locator(".thing.unread")).to_have_count(0)
    assert unread() == []


def test_an_expense_said_in_the_chat_shows_under_money_with_its_budget(
    phone: BrowserContext, web_url: str, served: Served, db: firestore.Client
) -> None:
    user = new_user()
    served.memory(user, "PATCH", "/v1/settings/assistant", {"timezone": ZONE, "currency": "CHF"})
    store = FirestoreAgentDataStore(db)
    now = datetime.now(UTC)
    store.put_budget(
        user, Budget(category="food", currency="CHF", monthly_limit_minor=20000, updated_at=now)
    )
    page = phone.new_page()
    sign_in(page, web_url, user)
    send(page, "[spend] I spent 12.50 CHF on food")
    approve_each_ask(page)
    day = timedelta(days=1)
    try:
        wait_for(lambda: store.list_expenses(user, now - day, now + day, 5), 60)
    finally:
        [chat] = served.api("GET", "/v1/chats", user).json()["chats"]
        print([m["text"][:120] for m in served.messages(user, chat["id"]).json()["messages"]])

    go_to(page, "Money")
    by_category = page.get_by_role("list", name="By category")
    expect(by_category).to_contain_text("food: CHF 12.50")
    expect(by_category).to_contain_text("CHF 187.50 left of CHF 200.00")
    assert axe_violations(page) == []
    page.get_by_role("button", name="Delete: CHF 12.50 food").click()
    expect(page.get_by_role("status")).to_contain_text("Deleted")
    month = datetime.now(ZoneInfo(ZONE)).strftime("%Y-%m")
    listed = served.memory(user, "GET", "/v1/expenses", month=month, time_zone=ZONE).json()
    assert listed == {"expenses": [], "next_page_token": ""}


def test_calendar_entries_show_by_day_and_week_in_the_users_zone(
    phone: BrowserContext, web_url: str, served: Served, db: firestore.Client
) -> None:
    user = new_user()
    served.memory(user, "PATCH", "/v1/settings/assistant", {"timezone": ZONE})
    zurich = ZoneInfo(ZONE)
    today = datetime.now(zurich).replace(hour=9, minute=30, second=0, microsecond=0)
    store = FirestoreAgentDataStore(db)
    for days, title in ((0, "Dentist"), (2, "Team lunch")):
        start = (today + timedelta(days=days)).astimezone(UTC)
        event = CalendarEvent(
            id=f"ev{days}", title=title, start=start, end=start + timedelta(hours=1),
            location="Bern", created_at=datetime.now(UTC),
        )  # fmt: skip
        store.put_event(user, event)
    page = phone.new_page()
    sign_in(page, web_url, user)
    go_to(page, "Calendar")
    week = page.get_by_role("region", name="Calendar")
    expect(week.locator(".thing")).to_have_count(2)
    expect(week).to_contain_text("9:30")  # in Zurich, whatever the browser's zone
    page.get_by_role("button", name="Day", exact=True).click()
    expect(week.locator(".thing")).to_have_count(1)
    expect(week).to_contain_text("Dentist")
    page.get_by_role("button", name="Edit: Dentist").click()
    assert axe_violations(page) == []
    day = today.date().isoformat()
    week.get_by_label("Starts", exact=False).fill(f"{day}T11:00")
    week.get_by_label("Ends").fill(f"{day}T12:15")
    week.get_by_role("button", name="Save").click()
    expect(week).to_contain_text("11:00")
    moved = store.get_event(user, "ev0")
    assert moved is not None and moved.start == today.replace(hour=11, minute=0)
    page.get_by_role("button", name="Delete: Dentist").click()
    expect(week.locator(".thing")).to_have_count(0)
    start = today.replace(hour=0, minute=0).astimezone(UTC)
    left = served.memory(
        user, "GET", "/v1/calendarEvents",
        start=start.isoformat(), end=(start + timedelta(days=7)).isoformat(),
    ).json()  # fmt: skip
    assert [e["title"] for e in left["calendar_events"]] == ["Team lunch"]


def test_notes_are_found_by_a_word_and_edited(
    phone: BrowserContext, web_url: str, db: firestore.Client
) -> None:
    user = new_user()
    store = FirestoreAgentDataStore(db)
    now = datetime.now(UTC)
    for minutes, (title, text) in enumerate([("Groceries", "oat milk, bread"), ("Trip", "Rome")]):
        note = Note(
            id=f"n{minutes}", title=title, text=text, created_at=now + timedelta(minutes=minutes)
        )
        store.put_note(user, note)
    page = phone.new_page()
    sign_in(page, web_url, user)
    go_to(page, "Notes")
    notes = page.get_by_role("region", name="Notes")
    expect(notes.locator(".thing-title")).to_have_text(["Trip", "Groceries"])  # newest first
    page.get_by_role("searchbox", name="Search notes").fill("milk")
    page.get_by_role("searchbox", name="Search notes").press("Enter")
    expect(notes.locator(".thing-title")).to_have_text(["Groceries"])
    notes.get_by_role("button", name="Edit: Groceries").tap()
    assert axe_violations(page) == []
    notes.get_by_label("Text").fill("oat milk, bread, apples")
    notes.get_by_role("button", name="Save").tap()
    expect(notes.locator(".note-text")).to_have_text(["oat milk, bread, apples"])
    stored = store.get_note(user, "n0")
    assert stored is not None and stored.text == "oat milk, bread, apples"
