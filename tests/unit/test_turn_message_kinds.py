"""A turn stores its reply as what it is (the reply's kind) and a question with the id of
the interrupt it asked, whatever the words: a client never reads a question from the text."""

from __future__ import annotations

from shared.app.turn import TurnService
from shared.deps import Deps
from shared.fakes.scripted_llm import ScriptedLLM
from shared.models.wire import TurnResponse
from tests.unit.turn_kit import classification, request


def stored(deps: Deps, response: TurnResponse) -> list[tuple[str, str, str | None]]:
    messages = deps.conversations.recent_messages("alice", response.chat_id, 10)
    return [(m.role, m.kind, m.question_id) for m in messages]


def test_a_reply_with_a_numbered_list_is_text(deps: Deps, llm: ScriptedLLM) -> None:
    llm.add(classification(), "Here is the plan:\n1. Book the hotel\n2. Pack")
    response = TurnService(deps).run("alice", request("Plan my weekend"))
    assert response.reply.kind == "text"
    assert stored(deps, response) == [("user", "text", None), ("assistant", "text", None)]


def test_a_turns_question_names_the_interrupt_the_chat_waits_on(
    deps: Deps, llm: ScriptedLLM
) -> None:
    plan = {"steps": [{"id": "s1", "agent": "productivity", "goal": "book Friday 3pm gym"}]}
    llm.add(classification("complex"), plan)
    asked = TurnService(deps).run("alice", request("Book me the gym on Friday"))
    assert asked.interrupt is not None
    assert stored(deps, asked) == [
        ("user", "text", None),
        ("assistant", "question", asked.interrupt.id),
    ]
    chat = deps.conversations.get_chat("alice", asked.chat_id)
    assert chat is not None and chat.control.interrupt == asked.interrupt


def test_a_started_job_is_progress_and_a_failed_turn_its_fallback(
    deps: Deps, llm: ScriptedLLM
) -> None:
    plan = {"steps": [{"id": "s1", "agent": "research", "goal": "compare hotels in Rome"}]}
    llm.add(classification("complex"), plan)
    started = TurnService(deps).run("alice", request("Compare hotels in Rome"))
    assert started.reply.kind == "progress" and started.jobs
    assert stored(deps, started)[-1] == ("assistant", "progress", None)

    bad = {"steps": [{"id": "s1", "agent": "hacker", "goal": "do things"}]}
    llm.add(classification("complex"), bad, bad)
    failed = TurnService(deps).run("alice", request("Do something", cmid="m2"))
    assert stored(deps, failed)[-1] == ("assistant", "fallback", None)
