"""Rules the in-memory fake and the Firestore adapter of the agents' data share.

Pure functions: the bounds of a page, how a note search matches, where a record lives.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from shared.models.agent_data import (
    MAX_PAGE,
    Note,
    OutboundEmail,
    RelayAnswer,
    Reminder,
    SentMessage,
)
from shared.ports import Mailer

NOTE_SCAN = 500  # notes a search reads (newest first): Firestore has no full-text index

# Collections under users/{uid}: account erasure and export walk them with the rest.
REMINDERS, EVENTS, NOTES = "reminders", "events", "notes"
BUDGETS, EXPENSES, FEEDBACK = "budgets", "expenses", "feedback"
OUTBOX = "outbox"


def reminder_data(reminder: Reminder, queued: bool) -> dict[str, Any]:
    """A reminder's document: the record, ``open_due_at`` while it is open (the open list's
    order), ``unqueued_due_at`` while it waits to be given a delivery task (the sweep's),
    ``done_at`` once done (the done list's)."""
    data = reminder.model_dump()
    if reminder.open:
        data["open_due_at"] = reminder.due_at
    if reminder.state == "pending" and not queued:
        data["unqueued_due_at"] = reminder.due_at
    if reminder.state == "done":  # completed_at is stored null otherwise, and null sorts
        data["done_at"] = reminder.completed_at or reminder.updated_at
    return data


def check_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_PAGE:
        raise ValueError(f"limit must be 1..{MAX_PAGE}, not {limit}")
    return limit


def check_window(start: datetime, end: datetime) -> None:
    if start.tzinfo is None or end.tzinfo is None:
        raise ValueError("start and end must be timezone-aware")
    if end <= start:
        raise ValueError("end must be after start")


def query_words(query: str) -> list[str]:
    words = query.casefold().split()
    if not words or len(query) > 200:
        raise ValueError("a note search needs 1..200 characters of words")
    return words


def note_matches(note: Note, words: list[str]) -> bool:
    haystack = f"{note.title}\n{note.text}".casefold()
    return all(word in haystack for word in words)


def outbox_doc_id(idempotency_key: str) -> str:
    """Any key text as a valid, fixed-length document id."""
    if not idempotency_key or len(idempotency_key) > 1500:
        raise ValueError("an idempotency key has 1..1500 characters")
    return hashlib.sha256(idempotency_key.encode()).hexdigest()


def message_id(idempotency_key: str, domain: str) -> str:
    """The Message-ID of the send approved under this key: the same on every retry, so a
    relay or a mailbox that sees it twice knows it is one message."""
    return f"<{outbox_doc_id(idempotency_key)[:40]}.approved@{domain}>"


def outbox_record(
    idempotency_key: str, message: OutboundEmail, now: datetime, mailer: Mailer | None, store: str
) -> SentMessage:
    """A send as first recorded: ``sent`` by the store itself without a relay, else
    ``pending`` until the relay's answer settles it (``settled``)."""
    return SentMessage(
        id=outbox_doc_id(idempotency_key),
        idempotency_key=idempotency_key,
        message=message,
        sent_at=now,
        provider=store if mailer is None else "smtp",
        status="sent" if mailer is None else "pending",
        message_id=message_id(idempotency_key, mailer.domain if mailer else store),
    )


def settled(record: SentMessage, answer: RelayAnswer, now: datetime) -> SentMessage:
    """The record as the relay's answer leaves it."""
    update = {
        "status": answer.status,
        "relay_code": answer.code,
        "relay_reply": answer.reply,
        "settled_at": now,
    }
    return record.model_copy(update=update)
