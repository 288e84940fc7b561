"""The terminal chat of `make dev` against the served functions: a question is answered
through resume, and an input that picks no option goes on as a new message."""

from __future__ import annotations

import builtins
import uuid
from collections.abc import Iterator

import pytest
from google.cloud import firestore

from scripts import chat
from tests.e2e.conftest import Served
from tests.e2e.test_turn_graph_over_http import seed_namesakes

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


def _typed(lines: list[str]) -> Iterator[str]:
    yield from lines
    raise EOFError


def test_the_chat_answers_a_question_through_resume(
    served: Served,
    db: firestore.Client,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    user = f"u{uuid.uuid4().hex[:12]}"
    seed_namesakes(user)
    typed = _typed(["[ask] What does @Thomas like?", "2", "[ask] And @Thomas again?", "hm"])
    monkeypatch.setattr(builtins, "input", lambda _prompt="": next(typed))
    chat.chat(served.turn_url, served.resume_url, {"Authorization": f"Bearer {served.token(user)}"})
    out = capsys.readouterr().out
    assert out.count("Which Thomas do you mean?") == 2
    assert "You said: [ask] What does @Thomas like?" in out  # the resumed question
    assert "You said: hm" in out  # picked nothing: sent as a new message
    turns = db.collection("users").document(user).collection("turns").stream()
    assert sum(doc.id.startswith("resume.") for doc in turns) == 1
