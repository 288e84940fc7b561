"""``/v1/reminders`` and ``/v1/notifications`` over HTTP through the one origin, against the
test stack: a reminder set through the API gets its task on the Cloud Tasks emulator's
reminders queue; the test moves the functions' clock to the due time (their offset clock)
and has the emulator run the task now (Cloud Tasks' RunTask), instead of waiting for it.
Then the inbox has exactly one notification, whatever the redeliveries."""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from google.cloud import tasks_v2

from scripts.stacklib.tokens import mint_internal_token
from shared.adapters.cloud_tasks import build_tasks_client
from shared.config import Settings
from shared.services.reminders.schedule import task_name
from tests.e2e.conftest import EVAL_CLOCK, STATE, Served, new_user, refused, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def later(**delta: float) -> str:
    return iso(datetime.now(UTC) + timedelta(**delta))


@pytest.fixture
def moved_clock() -> Iterator[Any]:
    """Moves every served function's clock (their ``CLOCK_OFFSET_FILE``); back at the end."""

    def move(seconds: float) -> None:
        EVAL_CLOCK.write_text(f"{seconds}\n")

    yield move
    EVAL_CLOCK.write_text("0\n")


def run_task(user: str, reminder: dict[str, Any], version: int = 1) -> None:
    """Cloud Tasks' RunTask: the emulator dispatches the reminder's task now."""
    settings = Settings()
    client = build_tasks_client(settings)
    queue = client.queue_path(settings.gcp_project, settings.tasks_location, "reminders")
    name = f"{queue}/tasks/{task_name(user, reminder['id'], version)}"
    client.run_task(request=tasks_v2.RunTaskRequest(name=name))


def task_exists(user: str, reminder_id: str, version: int) -> bool:
    settings = Settings()
    client = build_tasks_client(settings)
    queue = client.queue_path(settings.gcp_project, settings.tasks_location, "reminders")
    try:
        client.get_task(name=f"{queue}/tasks/{task_name(user, reminder_id, version)}")
    except Exception:
        return False
    return True


def deliver(served: Served, user: str, reminder_id: str, version: int) -> httpx.Response:
    """What Cloud Tasks sends, sent again (a redelivery)."""
    url = served.resume_url.rstrip("/") + "/reminders/deliver"
    email = Settings().tasks_invoker_email
    token = mint_internal_token(STATE, url, email)
    body = {"user_id": user, "reminder_id": reminder_id, "version": version}
    return httpx.post(url, json=body, headers={"Authorization": f"Bearer {token}"}, timeout=60)


def create(served: Served, user: str, **body: Any) -> dict[str, Any]:
    answer = served.api("POST", "/v1/reminders", user, body)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def inbox(served: Served, user: str, **params: Any) -> list[dict[str, Any]]:
    answer = served.api("GET", "/v1/notifications", user, params=params)
    assert answer.status_code == 200, answer.text
    return list(answer.json()["notifications"])


def test_a_reminder_rings_once_at_its_time(served: Served, moved_clock: Any) -> None:
    user = new_user()
    reminder = create(served, user, text="call Tom", due_at=later(minutes=2),
                      time_zone="Europe/Zurich")  # fmt: skip
    assert reminder["state"] == "pending" and reminder["recurrence"] == ""
    assert task_exists(user, reminder["id"], 1)
    assert inbox(served, user) == []
    moved_clock(120)
    run_task(user, reminder)
    got = wait_for(lambda: inbox(served, user))
    assert [(n["kind"], n["title"], n["body"]) for n in got] == [
        ("reminder_due", "Reminder", "call Tom")
    ]
    assert got[0]["target"] == {"reminder_id": reminder["id"]} and got[0]["read"] is False
    after = served.api("GET", f"/v1/reminders/{reminder['id']}", user).json()
    assert after["state"] == "fired"
    with ThreadPoolExecutor(max_workers=10) as pool:  # a storm of 20 redeliveries
        answers = list(pool.map(lambda _: deliver(served, user, reminder["id"], 1), range(20)))
    assert {a.status_code for a in answers} == {200}
    assert {a.json()["status"] for a in answers} == {"nothing_to_ring"}
    assert len(inbox(served, user)) == 1


def test_an_edited_or_cancelled_reminder_never_rings_its_old_version(
    served: Served, moved_clock: Any
) -> None:
    user = new_user()
    edited = create(served, user, text="water plants", due_at=later(minutes=5))
    cancelled = create(served, user, text="old plan", due_at=later(minutes=5))
    path = f"/v1/reminders/{edited['id']}"
    moved = {"due_at": later(minutes=30)}
    patch = served.api("PATCH", path, user, moved, headers={"If-Match": edited["etag"]})
    assert patch.status_code == 200, patch.text
    assert served.api("DELETE", f"/v1/reminders/{cancelled['id']}", user).status_code == 204
    moved_clock(300)
    for reminder in (edited, cancelled):
        assert deliver(served, user, reminder["id"], 1).json()["status"] == "nothing_to_ring"
    assert inbox(served, user) == []
    assert task_exists(user, edited["id"], 2)  # the edit's version has its own task
    assert served.api("GET", f"/v1/reminders/{cancelled['id']}", user).status_code == 404
    stale = served.api("PATCH", f"/v1/reminders/{edited['id']}", user, {"text": "x"},
                       headers={"If-Match": edited["etag"]})  # fmt: skip
    assert refused(stale) == (412, "stale_etag")
    moved_clock(1800)
    assert deliver(served, user, edited["id"], 2).json()["status"] == "fired"
    assert len(inbox(served, user)) == 1


def test_snooze_complete_and_the_lists(served: Served, moved_clock: Any) -> None:
    user = new_user()
    first = create(served, user, text="first", due_at=later(minutes=10))
    second = create(served, user, text="second", due_at=later(minutes=20))
    moved_clock(600)
    assert deliver(served, user, first["id"], 1).json()["status"] == "fired"
    snoozed = served.api("POST", f"/v1/reminders/{first['id']}:snooze", user, {"snooze": "1h"})
    assert snoozed.status_code == 200, snoozed.text
    assert snoozed.json()["state"] == "pending" and snoozed.json()["due_at"] > first["due_at"]
    assert "completed_at" not in snoozed.json()  # only when done
    open_ids = [r["id"] for r in served.api("GET", "/v1/reminders", user).json()["reminders"]]
    assert open_ids == [second["id"], first["id"]]  # by due_at
    done = served.api("POST", f"/v1/reminders/{second['id']}:complete", user, {})
    assert done.status_code == 200 and done.json()["state"] == "done"
    assert done.json()["completed_at"]
    listed = served.api("GET", "/v1/reminders", user, params={"filter": "done"}).json()
    assert [r["id"] for r in listed["reminders"]] == [second["id"]]
    again = served.api("POST", f"/v1/reminders/{second['id']}:snooze", user, {"snooze": "10m"})
    assert refused(again) == (409, "reminder_not_open")
    bad = served.api("POST", f"/v1/reminders/{first['id']}:snooze", user, {"snooze": "2d"})
    assert refused(bad)[0] == 400


def test_the_inbox_marks_read_deletes_and_clears(served: Served, moved_clock: Any) -> None:
    user = new_user()
    ids = [create(served, user, text=f"r{i}", due_at=later(minutes=1))["id"] for i in range(3)]
    moved_clock(60)
    for reminder_id in ids:
        assert deliver(served, user, reminder_id, 1).json()["status"] == "fired"
    listed = inbox(served, user, page_size=2)
    assert len(listed) == 2
    first = listed[0]["id"]
    read = served.api("POST", f"/v1/notifications/{first}:markRead", user, {})
    assert read.status_code == 200 and read.json()["read"] is True
    assert first not in [n["id"] for n in inbox(served, user, filter="unread")]
    assert len(inbox(served, user, filter="unread")) == 2
    assert served.api("DELETE", f"/v1/notifications/{first}", user).status_code == 204
    assert len(inbox(served, user)) == 2
    other = new_user()
    assert refused(served.api("DELETE", f"/v1/notifications/{listed[1]['id']}", other)) == (
        404, "not_found")  # fmt: skip
    assert served.api("POST", "/v1/notifications:markAllRead", user, {}).json() == {}
    assert inbox(served, user, filter="unread") == []
    assert served.api("POST", "/v1/notifications:clear", user, {}).json() == {}
    assert inbox(served, user) == []


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"text": "x", "due_at": "2020-01-01T09:00:00Z"}, "due_at_in_past"),
        ({"text": "x", "due_at": "2040-01-01T09:00:00Z"}, "due_at_too_far"),
        ({"text": "x", "due_at": "+", "time_zone": "Mars/Olympus"}, "unknown_time_zone"),
        ({"text": "x", "due_at": "+", "time_zone": "../../etc/passwd"}, "unknown_time_zone"),
        ({"text": "x", "due_at": "+", "recurrence": "FREQ=SOMETIMES"}, "invalid_recurrence"),
        ({"text": "x", "due_at": "+", "recurrence": "FREQ=DAILY;BYHOUR=99"}, "invalid_recurrence"),
        ({"text": "x", "due_at": "+", "recurrence": "FREQ=MINUTELY"}, "invalid_recurrence"),
        ({"text": "x", "due_at": "2030-01-01T09:00:00"}, "invalid_request"),  # no zone
        ({"text": "", "due_at": "+"}, "invalid_request"),
    ],
)
def test_bad_reminders_are_refused_and_nothing_is_stored(
    served: Served, body: dict[str, Any], code: str
) -> None:
    user = new_user()
    sent = {**body, "due_at": later(hours=1) if body["due_at"] == "+" else body["due_at"]}
    answer = served.api("POST", "/v1/reminders", user, sent)
    assert refused(answer) == (400, code)
    listed = served.api("GET", "/v1/reminders", user).json()
    assert listed == {"reminders": [], "next_page_token": ""}


def test_another_users_reminder_is_not_found(served: Served) -> None:
    owner, other = new_user(), new_user()
    reminder = create(served, owner, text="mine", due_at=later(hours=2))
    for method, suffix, body in [("GET", "", None), ("PATCH", "", {"text": "x"}),
                                 ("DELETE", "", None), ("POST", ":complete", {}),
                                 ("POST", ":snooze", {"snooze": "1h"})]:  # fmt: skip
        path = f"/v1/reminders/{reminder['id']}{suffix}"
        assert refused(served.api(method, path, other, body)) == (404, "not_found")
    assert served.api("GET", f"/v1/reminders/{reminder['id']}", owner).json()["text"] == "mine"
    assert os.environ["GCP_PROJECT"]


def test_the_sweep_gives_a_task_to_reminders_entering_the_horizon(
    served: Served, moved_clock: Any
) -> None:
    user = new_user()
    far = create(served, user, text="renew passport", due_at=later(days=40))
    assert not task_exists(user, far["id"], 1)  # beyond Cloud Tasks' 30 days
    url = served.resume_url.rstrip("/") + "/reminders/sweep"
    token = mint_internal_token(STATE, url, Settings().tasks_invoker_email)
    headers = {"Authorization": f"Bearer {token}"}
    assert httpx.post(url, json={}, headers=headers, timeout=60).status_code == 200
    assert not task_exists(user, far["id"], 1)  # still 40 days ahead
    moved_clock(12 * 86400)
    swept = httpx.post(url, json={}, headers=headers, timeout=60)
    assert swept.status_code == 200 and swept.json()["queued"] >= 1
    assert task_exists(user, far["id"], 1)
    wrong = mint_internal_token(STATE, url, "someone@else.iam.gserviceaccount.com")
    denied = httpx.post(url, json={}, headers={"Authorization": f"Bearer {wrong}"}, timeout=60)
    assert denied.status_code in (401, 403)


def test_a_recurring_reminder_rings_and_moves_to_its_next_occurrence(
    served: Served, moved_clock: Any
) -> None:
    user = new_user()
    daily = create(served, user, text="pills", due_at=later(minutes=3),
                   time_zone="Europe/Zurich", recurrence="FREQ=DAILY")  # fmt: skip
    moved_clock(180)
    assert deliver(served, user, daily["id"], 1).json()["status"] == "fired"
    after = served.api("GET", f"/v1/reminders/{daily['id']}", user).json()
    first = datetime.fromisoformat(daily["due_at"])
    assert after["state"] == "pending"
    assert datetime.fromisoformat(after["due_at"]) == first + timedelta(days=1)
    assert task_exists(user, daily["id"], 2)  # the next occurrence has its task
    assert deliver(served, user, daily["id"], 1).json()["status"] == "nothing_to_ring"
    assert len(inbox(served, user)) == 1
    done = served.api("POST", f"/v1/reminders/{daily['id']}:complete", user, {})
    assert done.json()["state"] == "done"  # the series ends
    assert deliver(served, user, daily["id"], 2).json()["status"] == "nothing_to_ring"
