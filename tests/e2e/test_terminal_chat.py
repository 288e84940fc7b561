"""The terminal chat (``scripts/chat.py``) as a user meets it: in a pseudo-terminal, typing
at its prompt, against the served functions of the test stack (the fake Vertex endpoint's
markers steer the model). A greeting streams its reply; a question shows numbered options
and the number typed next answers it through ``resume``, with the fact landing on the person
chosen (checked through the memory API), and words that pick no option go on as a new
message; Ctrl-D ends the chat."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pexpect
import pytest
from google.cloud import firestore

from scripts.stacklib.profile import ROOT
from shared.conversation.greetings import greeting_reply
from tests.e2e.browser.conftest import seed_thomases
from tests.e2e.conftest import PROFILE, Served, new_user, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.stack]

PROMPT = "you > "
ASK_THOMAS = "[facts] [ask] @Thomas moved to Bern; what does he like?"


@pytest.fixture
def terminal(served: Served) -> Iterator[tuple[pexpect.spawn, str]]:
    user = new_user()
    chat = pexpect.spawn(
        sys.executable,
        [str(ROOT / "scripts" / "chat.py"), "--profile", PROFILE, "--user", user],
        cwd=str(ROOT),
        env={**os.environ, "PYTHONUNBUFFERED": "1", "CHAT_WATCH_SECONDS": "0.5"},
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 120),
    )
    try:
        chat.expect_exact(f"chatting as '{user}'")
        yield chat, user
    finally:
        chat.close(force=True)


def test_a_greeting_streams_its_reply_and_ctrl_d_ends_the_chat(
    terminal: tuple[pexpect.spawn, str],
) -> None:
    chat, _ = terminal
    chat.expect_exact(PROMPT)
    chat.sendline("Hello!")
    chat.expect_exact("assistant > ")
    chat.expect_exact(greeting_reply("Hello!"))
    chat.expect_exact(PROMPT)
    chat.sendeof()
    chat.expect(pexpect.EOF)
    chat.close()
    assert chat.exitstatus == 0


def test_a_question_is_answered_by_typing_its_number(
    terminal: tuple[pexpect.spawn, str], served: Served, db: firestore.Client
) -> None:
    chat, user = terminal
    ids = seed_thomases(user)
    chat.expect_exact(PROMPT)
    chat.sendline(ASK_THOMAS)
    chat.expect_exact("1. Thomas (colleague)")
    chat.expect_exact("2. Thomas (sibling)")
    chat.expect_exact("(answer with a number or in your own words)")
    chat.expect_exact(PROMPT)
    chat.sendline("")  # the open question's options are not shown twice
    chat.expect_exact(PROMPT)
    assert "Thomas (" not in chat.before
    chat.sendline("2")
    chat.expect_exact(f"You said: {ASK_THOMAS}")
    chat.expect_exact(PROMPT)
    chat.sendline("")  # an empty line polls the chat: nothing new, nothing shown again
    chat.expect_exact(PROMPT)
    assert "Thomas (" not in chat.before

    def facts_of(person: str) -> list[str]:
        return [f["text"] for f in served.facts(user, f'subject_id = "{ids[person]}"')]

    assert wait_for(lambda: facts_of("sibling")) == ["Thomas moved to Bern; what does he like?"]
    assert facts_of("colleague") == []

    chat.sendline("[ask] And @Thomas again?")
    chat.expect_exact("(answer with a number or in your own words)")
    chat.expect_exact(PROMPT)
    chat.sendline("hm")  # no option's words: a new message, the question stays open
    chat.expect_exact("You said: hm")
    chat.expect_exact(PROMPT)
    turns = db.collection("users").document(user).collection("turns").stream()
    assert sum(doc.id.startswith("resume.") for doc in turns) == 1


def test_a_jobs_result_is_shown_once_even_when_it_lands_during_the_reply(
    terminal: tuple[pexpect.spawn, str],
) -> None:
    chat, _ = terminal
    chat.expect_exact(PROMPT)
    chat.sendline("[complex] Summarise my week")
    chat.expect_exact("I've started on it (Summarise my week)")
    seen, deadline = "", time.monotonic() + 60
    while time.monotonic() < deadline:  # each empty line polls; the job runs via Pub/Sub
        chat.expect_exact(PROMPT)
        seen += chat.before
        if "Result for: Summarise my week" in seen:
            break
        time.sleep(0.5)
        chat.sendline("")
    assert seen.count("Result for: Summarise my week") == 1
    chat.sendline("")
    chat.expect_exact(PROMPT)
    assert "Result for" not in chat.before  # shown once, never again


def test_a_due_reminder_is_printed_between_prompts_once(
    terminal: tuple[pexpect.spawn, str], served: Served
) -> None:
    from datetime import UTC, datetime, timedelta

    from tests.e2e.test_reminders_api import deliver

    chat, user = terminal
    chat.expect_exact(PROMPT)
    due = (datetime.now(UTC) + timedelta(minutes=5)).isoformat()
    made = served.api("POST", "/v1/reminders", user, {"text": "call Tom", "due_at": due})
    assert made.status_code == 200, made.text
    assert deliver(served, user, made.json()["id"], 1).json()["status"] == "fired"
    chat.sendline("")  # an empty line asks again
    chat.expect_exact("[reminder] call Tom")
    chat.expect_exact(PROMPT)
    chat.sendline("")
    index = chat.expect_exact(["[reminder] call Tom", PROMPT])
    assert index == 1  # printed once


def test_a_reminder_rings_while_the_prompt_waits(
    terminal: tuple[pexpect.spawn, str], served: Served
) -> None:
    """Nothing typed: the reminder is printed at its time, then the prompt again."""
    chat, user = terminal
    chat.expect_exact(PROMPT)
    due = (datetime.now(UTC) + timedelta(seconds=2)).isoformat()
    made = served.api("POST", "/v1/reminders", user, {"text": "water the plants", "due_at": due})
    assert made.status_code == 200, made.text
    chat.expect_exact("[reminder] water the plants", timeout=60)
    chat.expect_exact(PROMPT)
    unread = served.api("GET", "/v1/notifications", user, params={"filter": "unread"})
    assert unread.json()["notifications"] == []  # shown is read: never printed twice
