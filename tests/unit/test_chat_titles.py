"""A chat takes its title from the first turn that says something, in that turn's commit."""

from __future__ import annotations

from datetime import UTC, datetime

from shared.app.turn import TurnService
from shared.deps import Deps
from shared.fakes.scripted_llm import ScriptedLLM
from tests.unit.turn_kit import classification, request


def title(deps: Deps, chat_id: str) -> str:
    chat = deps.conversations.get_chat("alice", chat_id)
    assert chat is not None
    return chat.title


def test_a_greeting_leaves_the_chat_untitled_and_the_next_message_names_it(
    deps: Deps, llm: ScriptedLLM
) -> None:
    deps.conversations.create_chat("alice", "c1", datetime(2026, 3, 1, tzinfo=UTC))
    service = TurnService(deps)
    service.run("alice", request("Hello", chat_id="c1"))
    assert title(deps, "c1") == ""
    llm.add(classification(), "Sure.")
    service.run("alice", request("Plan a trip to Rome. In May.", cmid="m2", chat_id="c1"))
    assert title(deps, "c1") == "Plan a trip to Rome"
    llm.add(classification(), "Fine.")
    service.run("alice", request("Book the hotel", cmid="m3", chat_id="c1"))
    assert title(deps, "c1") == "Plan a trip to Rome"  # named once


def test_a_title_the_user_gave_is_kept(deps: Deps, llm: ScriptedLLM) -> None:
    deps.conversations.create_chat("alice", "c1", datetime(2026, 3, 1, tzinfo=UTC), "Trips")
    llm.add(classification(), "Sure.")
    TurnService(deps).run("alice", request("Plan a trip to Rome", chat_id="c1"))
    assert title(deps, "c1") == "Trips"
