"""Queues down: the turn is answered and recorded, its handoffs wait in its outbox, and the
chat's next turn or the scheduled drain sends them, each once."""

from __future__ import annotations

from typing import Any

import pytest

from shared.app.handoff_drain import drain_due
from shared.app.turn import TurnService
from shared.deps import Deps
from shared.errors import DependencyUnavailable
from shared.fakes.queues import FakePublisher, FakeTaskQueue
from shared.fakes.scripted_llm import ScriptedLLM
from shared.models.domain import Handoff
from shared.ports import QueuedTask
from tests.contract.test_turn_outbox import complete
from tests.unit.turn_kit import classification, metadata, request


class FlakyTasks(FakeTaskQueue):
    def __init__(self) -> None:
        super().__init__()
        self.down = True

    def enqueue(self, task: QueuedTask) -> bool:
        if self.down:
            raise DependencyUnavailable("cloud tasks unavailable")
        return super().enqueue(task)


class FlakyPublisher(FakePublisher):
    def __init__(self) -> None:
        super().__init__()
        self.down = True

    def publish(self, topic: str, data: bytes, attributes: dict[str, str]) -> str:
        if self.down:
            raise DependencyUnavailable("pub/sub unavailable")
        return super().publish(topic, data, attributes)


@pytest.fixture
def queues_down(deps: Deps) -> Deps:
    deps.__dict__["tasks"], deps.__dict__["publisher"] = FlakyTasks(), FlakyPublisher()
    return deps


def plan(llm: ScriptedLLM) -> None:
    """A turn with facts to extract and one research step published as a job."""
    llm.add(
        classification("complex", facts=True),
        {"steps": [{"id": "s1", "agent": "research", "goal": "find it"}]},
        "On it.",
    )


def sent(deps: Deps) -> tuple[list[str], list[str]]:
    tasks: Any = deps.tasks
    publisher: Any = deps.publisher
    return [t.name for t in tasks.tasks], [m.attributes["job_id"] for m in publisher.messages]


def test_a_turn_is_answered_while_the_queues_are_down(queues_down: Deps, llm: ScriptedLLM) -> None:
    plan(llm)
    response = TurnService(queues_down).run("alice", request("Remember I like figs"))
    assert response.reply.kind == "progress" and len(response.jobs) == 1
    assert metadata(queues_down, "m1").handoffs_unsent == 2
    kept = queues_down.conversations.outbox("alice", "m1")
    assert [h.kind for h in kept] == ["task", "message"]
    chat = queues_down.conversations.get_chat("alice", response.chat_id)
    assert chat is not None and chat.outbox == ["m1"]
    assert sent(queues_down) == ([], [])


def test_the_chats_next_turn_sends_them_once(queues_down: Deps, llm: ScriptedLLM) -> None:
    plan(llm)
    first = TurnService(queues_down).run("alice", request("Remember I like figs"))
    tasks: Any = queues_down.tasks
    publisher: Any = queues_down.publisher
    tasks.down = publisher.down = False
    llm.add(classification(), "Sure.")
    TurnService(queues_down).run("alice", request("And now?", "m2", first.chat_id))
    llm.add(classification(), "Sure.")
    TurnService(queues_down).run("alice", request("Again?", "m3", first.chat_id))
    names, jobs = sent(queues_down)
    assert names == [f"extract-{first.turn_id}"] and jobs == first.jobs
    assert queues_down.conversations.outbox("alice", "m1") == []
    chat = queues_down.conversations.get_chat("alice", first.chat_id)
    assert chat is not None and chat.outbox == []


def test_the_scheduled_drain_sends_what_it_can_and_keeps_the_rest(
    queues_down: Deps, llm: ScriptedLLM
) -> None:
    plan(llm)
    TurnService(queues_down).run("alice", request("Remember I like figs"))
    publisher: Any = queues_down.publisher
    publisher.down = False  # Pub/Sub is back, Cloud Tasks is not
    first = drain_due(queues_down)
    assert (first.turns, first.sent, first.left) == (1, 1, 1)
    tasks: Any = queues_down.tasks
    tasks.down = False
    second = drain_due(queues_down)
    assert (second.turns, second.sent, second.left) == (1, 1, 0)
    assert drain_due(queues_down).turns == 0
    names, jobs = sent(queues_down)
    assert len(names) == 1 and len(jobs) == 1


class RefusingTasks(FakeTaskQueue):
    """A queue that refuses one turn's task for good (a misconfigured queue, say)."""

    def enqueue(self, task: QueuedTask) -> bool:
        if task.name.endswith("poisoned"):
            raise ValueError("no such queue")
        return super().enqueue(task)


def test_one_outbox_that_cannot_be_drained_does_not_block_the_others(deps: Deps) -> None:
    def task(name: str) -> Handoff:
        return Handoff(kind="task", name=name, queue="extraction", url="http://x/", body="{}")

    complete(deps.conversations, "alice", "cm1", [task("extract-poisoned")])
    complete(deps.conversations, "bob", "cm1", [task("extract-fine")])
    deps.__dict__["tasks"] = RefusingTasks()
    report = drain_due(deps)
    assert (report.turns, report.sent, report.left) == (2, 1, 1)
    assert [t.name for t in deps.tasks.tasks] == ["extract-fine"]  # type: ignore[attr-defined]
