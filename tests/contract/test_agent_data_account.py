"""The agents' data is the user's: account export includes it, account erasure deletes it.

Firestore only (the fakes have no account tree): the records live under ``users/{uid}``,
which ``FirestoreAccountStore`` exports and erases whole; a neighbour whose uid shares the
prefix keeps everything.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore

from shared.adapters.firestore_account import FirestoreAccountStore
from shared.adapters.firestore_agent_data import FirestoreAgentDataStore
from shared.adapters.firestore_outbox import FirestoreOutbox
from shared.adapters.firestore_reminders import FirestoreReminderStore
from shared.fakes.clock import FixedClock
from shared.models.agent_data import (
    Budget,
    CalendarEvent,
    Expense,
    Feedback,
    Note,
    OutboundEmail,
    Reminder,
)
from tests.contract.conftest import unique

pytestmark = pytest.mark.stack

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
EMAIL = OutboundEmail(to=["bea@example.com"], subject="Dinner", body="See you at 8.")
KEY = "job-1/s1/approval"


@pytest.fixture
def client(stack_env: None, firestore_client: firestore.Client) -> firestore.Client:
    return firestore_client


def fill(client: firestore.Client, user_id: str) -> None:
    store = FirestoreAgentDataStore(client)
    later = NOW + timedelta(hours=1)
    reminder = Reminder(id="r1", text="call Bea", due_at=later, created_at=NOW)
    FirestoreReminderStore(client).create(user_id, reminder)
    store.put_event(
        user_id, CalendarEvent(id="e1", title="gym", start=NOW, end=later, created_at=NOW)
    )
    store.put_note(user_id, Note(id="n1", title="Rome", text="hotel", created_at=NOW))
    store.put_budget(
        user_id,
        Budget(category="food", currency="CHF", monthly_limit_minor=50000, updated_at=NOW),
    )
    store.put_expense(
        user_id,
        Expense(
            id="x1",
            amount_minor=1250,
            currency="CHF",
            category="food",
            spent_at=NOW,
            created_at=NOW,
        ),
    )
    store.put_feedback(user_id, Feedback(id="f1", text="too slow", created_at=NOW))
    FirestoreOutbox(client, FixedClock(NOW)).send(user_id, EMAIL, KEY)


def remaining(client: firestore.Client, user_id: str) -> dict[str, bool]:
    store, reminders = FirestoreAgentDataStore(client), FirestoreReminderStore(client)
    window = (NOW - timedelta(days=1), NOW + timedelta(days=1))
    checks: dict[str, Callable[[], object]] = {
        "reminders": lambda: reminders.list_open(user_id, 10) + reminders.list_done(user_id, 10),
        "events": lambda: store.list_events(user_id, *window, 10),
        "notes": lambda: store.search_notes(user_id, "rome", 10),
        "budgets": lambda: store.list_budgets(user_id, 10),
        "expenses": lambda: store.list_expenses(user_id, *window, 10),
        "feedback": lambda: store.list_feedback(user_id, 10),
        "outbox": lambda: FirestoreOutbox(client, FixedClock()).get_sent(user_id, KEY),
    }
    return {name: bool(read()) for name, read in checks.items()}


def test_export_includes_every_agent_record(client: firestore.Client) -> None:
    user_id = unique("user")
    fill(client, user_id)
    exported = FirestoreAccountStore(client).export_user(user_id)
    by_collection = {doc.path.split("/")[0]: doc for doc in exported.documents}
    assert set(by_collection) >= {
        "reminders",
        "events",
        "notes",
        "budgets",
        "expenses",
        "feedback",
        "outbox",
    }
    assert by_collection["reminders"].data["text"] == "call Bea"
    assert by_collection["expenses"].data["amount_minor"] == 1250
    assert by_collection["outbox"].data["message"]["to"] == ["bea@example.com"]
    assert by_collection["outbox"].data["sent_at"] == NOW.isoformat()


def test_erasure_deletes_every_agent_record_and_no_neighbours(client: firestore.Client) -> None:
    user_id = unique("user")
    neighbour = f"{user_id}_2"  # shares the uid as a prefix
    fill(client, user_id)
    fill(client, neighbour)
    assert all(remaining(client, user_id).values())
    FirestoreAccountStore(client).delete_user(user_id)
    assert not any(remaining(client, user_id).values())
    assert all(remaining(client, neighbour).values())
    assert FirestoreAccountStore(client).export_user(user_id).documents == []


def test_racing_sends_leave_one_outbox_document(client: firestore.Client) -> None:
    user_id, senders = unique("user"), 4
    outbox, start = FirestoreOutbox(client, FixedClock(NOW)), threading.Barrier(senders)

    def send(n: int) -> str:
        start.wait()
        message = EMAIL.model_copy(update={"body": f"attempt {n}"})
        return outbox.send(user_id, message, KEY).message.body

    with ThreadPoolExecutor(senders) as pool:
        bodies = set(pool.map(send, range(senders)))
    documents = list(client.collection("users").document(user_id).collection("outbox").stream())
    assert len(documents) == 1 and len(bodies) == 1
    assert documents[0].to_dict()["message"]["body"] in bodies
