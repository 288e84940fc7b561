"""The calendar feed through the one origin: turned on, read by a calendar app with nothing
but its URL, rotated and revoked (404 after), and never another user's calendar."""

from __future__ import annotations

from datetime import date, timedelta

import httpx
import icalendar
import pytest
import recurring_ical_events
from google.cloud import firestore

from shared.adapters.clock import SystemClock
from shared.adapters.firestore_agent_data import FirestoreAgentDataStore
from shared.adapters.firestore_reminders import FirestoreReminderStore
from shared.models.agent_data import CalendarEvent, Reminder
from tests.e2e.conftest import Served, new_user

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


def subscribe(url: str) -> httpx.Response:
    """What a calendar app sends: a plain GET of the URL, no credentials."""
    return httpx.get(url, timeout=30)


def seed(db: firestore.Client, user: str, title: str) -> None:
    store, now = FirestoreAgentDataStore(db), SystemClock().now()
    start = now.replace(microsecond=0) + timedelta(days=1)
    store.put_event(user, CalendarEvent(
        id="weekly", title=title, start=start, end=start + timedelta(hours=1),
        recurrence="FREQ=WEEKLY;COUNT=4", created_at=now,
    ))  # fmt: skip
    FirestoreReminderStore(db).create(user, Reminder(id="r1", text=f"{title} notes",
                                                     due_at=start, created_at=now))  # fmt: skip


def test_a_feed_is_subscribed_rotated_and_revoked(served: Served, db: firestore.Client) -> None:
    alice, bob = new_user(), new_user()
    seed(db, alice, "Alice's standup")
    seed(db, bob, "Bob's dentist")
    off = served.api("GET", "/v1/calendarFeed", alice).json()
    assert off == {"enabled": False, "url": None, "created_at": None}

    on = served.api("POST", "/v1/calendarFeed:enable", alice, {})
    assert on.status_code == 200, on.text
    url = on.json()["url"]
    assert url.startswith(served.origin_url + "/v1/calendarFeeds/")
    assert served.api("POST", "/v1/calendarFeed:enable", alice).json()["url"] == url  # once
    assert served.api("GET", "/v1/calendarFeed", alice).json() == on.json()

    feed = subscribe(url)
    assert feed.status_code == 200 and feed.headers["content-type"].startswith("text/calendar")
    calendar = icalendar.Calendar.from_ical(feed.content)
    [todo] = calendar.walk("VTODO")
    assert todo["SUMMARY"] == "Alice's standup notes"
    today = date.today()
    found = recurring_ical_events.of(calendar).between(today, today + timedelta(days=40))
    assert [str(e["SUMMARY"]) for e in found] == ["Alice's standup"] * 4

    bobs = served.api("POST", "/v1/calendarFeed:enable", bob).json()["url"]
    assert bobs != url and b"Alice" not in subscribe(bobs).content

    rotated = served.api("POST", "/v1/calendarFeed:rotate", alice).json()["url"]
    assert rotated != url and subscribe(rotated).status_code == 200
    assert _not_found(subscribe(url))

    revoked = served.api("DELETE", "/v1/calendarFeed", alice)
    assert revoked.json() == {"enabled": False, "url": None, "created_at": None}
    assert _not_found(subscribe(rotated))
    assert subscribe(bobs).status_code == 200  # another user's feed is untouched


@pytest.mark.parametrize(
    "token",
    ["A" * 43, "not-a-token", "x" * 5000, "..%2F..%2Fsettings%2Fassistant", "A" * 42 + "%0d"],
)
def test_an_unknown_or_malformed_token_is_404(served: Served, token: str) -> None:
    answer = subscribe(f"{served.origin_url}/v1/calendarFeeds/{token}/calendar.ics")
    assert _not_found(answer)


def test_the_feed_url_is_read_only(served: Served) -> None:
    user = new_user()
    url = served.api("POST", "/v1/calendarFeed:enable", user).json()["url"]
    answer = httpx.post(url, json={}, timeout=30)
    assert (answer.status_code, answer.json()["error"]["code"]) == (405, "method_not_allowed")


def _not_found(answer: httpx.Response) -> bool:
    return answer.status_code == 404 and answer.json()["error"]["code"] == "not_found"
