"""Done-when of issue 25, on the test stack: "remind me in 2 minutes to ..." set through the
API rings at its time with exactly one inbox notification, one Web Push at the mock push
service (decrypted there with the browser's keys) and one FCM request at the fake; 20
redeliveries of the same task add nothing. Time is moved, not waited: the functions' offset
clock goes 2 minutes ahead and the Cloud Tasks emulator runs the task now (RunTask)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.e2e.conftest import Served, new_user, refused, wait_for
from tests.e2e.test_reminders_api import (  # the clock, the emulator's RunTask, the inbox
    create,
    deliver,
    inbox,
    later,
    moved_clock,
    run_task,
)

pytestmark = [pytest.mark.e2e, pytest.mark.stack]
__all__ = ["moved_clock"]  # a fixture, used by name


def register(served: Served, user: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = served.api("POST", "/v1/devices", user, body)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def devices(served: Served, user: str) -> list[str]:
    return [d["kind"] for d in served.api("GET", "/v1/devices", user).json()["devices"]]


def test_remind_me_in_two_minutes_rings_once_on_every_channel(
    served: Served, moved_clock: Any
) -> None:
    assert served.push is not None and served.fcm is not None
    user = new_user()
    browser = served.push.subscribe()
    phone = served.fcm.register()
    register(served, user, {"kind": "web_push", "web_push": browser})
    register(served, user, {"kind": "fcm", "fcm_token": phone})
    reminder = create(served, user, text="call Tom", due_at=later(minutes=2))
    moved_clock(120)
    run_task(user, reminder)
    [note] = wait_for(lambda: inbox(served, user))
    pushed = wait_for(lambda: served.push.received(browser["endpoint"]))
    sent = [m for m in served.fcm.sent if m["token"] == phone]
    expected = {"id": note["id"], "kind": "reminder_due", "title": "Reminder",
                "body": "call Tom", "url": "/#reminders"}  # fmt: skip
    assert pushed == [expected]
    assert [m["data"] for m in sent] == [expected]
    assert sent[0]["android"]["priority"] == "NORMAL"
    with ThreadPoolExecutor(max_workers=10) as pool:
        list(pool.map(lambda _: deliver(served, user, reminder["id"], 1), range(20)))
    assert len(inbox(served, user)) == 1
    assert served.push.received(browser["endpoint"]) == [expected]
    assert len([m for m in served.fcm.sent if m["token"] == phone]) == 1
    assert served.push.refused == []


def test_devices_the_push_services_forgot_are_pruned(served: Served, moved_clock: Any) -> None:
    assert served.push is not None and served.fcm is not None
    user = new_user()
    browser = served.push.subscribe()
    phone = served.fcm.register()
    register(served, user, {"kind": "web_push", "web_push": browser})
    register(served, user, {"kind": "fcm", "fcm_token": phone})
    served.push.forget(browser["endpoint"])  # the user unsubscribed in the browser
    served.fcm.unregistered.add(phone)  # the app was uninstalled
    reminder = create(served, user, text="urgent thing", due_at=later(minutes=1), urgent=True)
    moved_clock(60)
    assert deliver(served, user, reminder["id"], 1).json()["status"] == "fired"
    assert len(inbox(served, user)) == 1
    assert devices(served, user) == []


def test_forged_or_foreign_fcm_tokens_are_refused(served: Served) -> None:
    assert served.fcm is not None
    user = new_user()
    forged = {"kind": "fcm", "fcm_token": "not-a-token"}
    assert refused(served.api("POST", "/v1/devices", user, forged)) == (400, "invalid_device")
    foreign = {"kind": "fcm", "fcm_token": "abc:APA91b" + "x" * 140}  # another app's, say
    assert refused(served.api("POST", "/v1/devices", user, foreign)) == (400, "invalid_device")
    assert devices(served, user) == []


def test_a_kind_turned_off_or_quiet_hours_push_nothing_but_the_inbox_has_it(
    served: Served, moved_clock: Any
) -> None:
    assert served.push is not None
    user = new_user()
    browser = served.push.subscribe()
    register(served, user, {"kind": "web_push", "web_push": browser})
    off = served.api("PATCH", "/v1/settings/notifications", user,
                     {"kinds": {"reminder_due": False}})  # fmt: skip
    assert off.status_code == 200, off.text
    reminder = create(served, user, text="quiet one", due_at=later(minutes=1))
    moved_clock(60)
    assert deliver(served, user, reminder["id"], 1).json()["pushed"] == 0
    assert len(inbox(served, user)) == 1
    assert served.push.received(browser["endpoint"]) == []


def test_devices_reminders_and_the_inbox_go_with_the_account(
    served: Served, moved_clock: Any
) -> None:
    assert served.push is not None and served.fcm is not None
    user = new_user()
    browser = served.push.subscribe()
    register(served, user, {"kind": "web_push", "web_push": browser})
    register(served, user, {"kind": "fcm", "fcm_token": served.fcm.register()})
    rang = create(served, user, text="rang before", due_at=later(minutes=1))
    waiting = create(served, user, text="never rings", due_at=later(minutes=2))
    moved_clock(60)
    assert deliver(served, user, rang["id"], 1).json()["status"] == "fired"
    exported = served.memory(user, "GET", "/v1/account:export").json()
    paths = {d["path"].split("/")[0] for d in exported["conversations"]["documents"]}
    assert {"devices", "reminders", "notifications"} <= paths
    assert served.memory(user, "DELETE", "/v1/account", confirm="true").status_code == 200
    assert devices(served, user) == []
    assert inbox(served, user) == []
    assert served.api("GET", "/v1/reminders", user).json()["reminders"] == []
    moved_clock(120)  # the erased reminder's task still comes: it finds nothing to ring
    assert deliver(served, user, waiting["id"], 1).json()["status"] == "nothing_to_ring"
    assert inbox(served, user) == []
    assert len(served.push.received(browser["endpoint"])) == 1  # only the one before


def test_remind_me_in_two_minutes_said_in_the_chat_and_approved(
    served: Served, moved_clock: Any
) -> None:
    """The whole way: the message plans the productivity agent, the user approves, the job's
    agent calls ``reminders_add`` (the fake model's rule), and the reminder rings."""
    assert served.push is not None and served.fcm is not None
    user = new_user()
    browser = served.push.subscribe()
    phone = served.fcm.register()
    register(served, user, {"kind": "web_push", "web_push": browser})
    register(served, user, {"kind": "fcm", "fcm_token": phone})
    said = {"message": "[act] remind me in 2 minutes to call Tom", "client_message_id": "m1"}
    asked = served.say(user, said).json()
    assert asked["interrupt"]["kind"] == "approval", asked
    approved = served.answer(user, asked["chat_id"], asked["interrupt"]["id"], "approve")
    assert approved.status_code == 200, approved.text
    # The job's agent asks before it acts (a novice's trust): the user is told, and approves.
    chat = f"/v1/chats/{asked['chat_id']}"
    question = wait_for(lambda: served.api("GET", chat, user).json()["question"])
    assert "reminders_add" in question["question"]
    [waiting] = wait_for(lambda: inbox(served, user))
    assert (waiting["kind"], waiting["target"]["question_id"]) == ("approval_waiting",
                                                                  question["id"])  # fmt: skip
    approved = served.answer(user, asked["chat_id"], question["id"], "approve")
    assert approved.status_code == 200, approved.text
    [reminder] = wait_for(
        lambda: served.api("GET", "/v1/reminders", user).json()["reminders"], seconds=60
    )
    assert reminder["text"] == "call Tom" and reminder["state"] == "pending"
    moved_clock(120)
    run_task(user, reminder)
    rang = wait_for(lambda: [n for n in inbox(served, user) if n["kind"] == "reminder_due"])
    assert [n["body"] for n in rang] == ["call Tom"]
    told = ["approval_waiting", "job_done", "reminder_due"]  # once each, on each channel
    wait_for(lambda: len(served.push.received(browser["endpoint"])) == len(told))
    assert sorted(p["kind"] for p in served.push.received(browser["endpoint"])) == told
    assert sorted(m["data"]["kind"] for m in served.fcm.sent if m["token"] == phone) == told
    assert sorted(n["kind"] for n in inbox(served, user)) == told
