"""Turns while PostgreSQL is down: answered without memory, honestly, with the extraction
still handed to the queue (which retries it until the database is back)."""

from __future__ import annotations

from typing import Any

import pytest

from shared.app.turn import TurnService
from shared.config import Settings
from shared.conversation.phrases import phrase
from shared.deps import Deps
from shared.errors import DependencyUnavailable
from shared.fakes.clock import FixedClock
from shared.fakes.scripted_llm import HashEmbedder, ScriptedLLM
from shared.models.domain import ExtractionTask
from testkit.fakes import in_memory_stores
from tests.unit.turn_kit import classification, metadata, nodes, request


class Down:
    """Any port whose store is unreachable: every call raises ``DependencyUnavailable``."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, method: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            raise DependencyUnavailable(f"{self._name} unavailable")

        return call


@pytest.fixture
def without_postgres(clock: FixedClock, llm: ScriptedLLM) -> Deps:
    settings = Settings(env="test", model_provider="scripted")
    stores = in_memory_stores(clock)
    for name in ("facts", "contacts", "pending", "keyring"):
        stores[name] = Down(f"postgres ({name})")
    return Deps(settings, clock=clock, llm=llm, embedder=HashEmbedder(dimension=64), **stores)


NOTE = phrase("memory_unavailable", "en")


def test_a_greeting_needs_no_database(without_postgres: Deps, llm: ScriptedLLM) -> None:
    reply = TurnService(without_postgres).run("alice", request("Hello!")).reply
    assert reply.kind == "text" and NOTE not in reply.text


def test_a_simple_turn_is_answered_without_a_note(without_postgres: Deps, llm: ScriptedLLM) -> None:
    llm.add(classification(), "It is a fine day.")
    reply = TurnService(without_postgres).run("alice", request("How is the day?")).reply
    assert reply.text == "It is a fine day."
    assert metadata(without_postgres, "m1").outcome == "ok"


def test_a_turn_that_needed_memory_says_so_and_still_hands_off_its_extraction(
    without_postgres: Deps, llm: ScriptedLLM
) -> None:
    llm.add(
        classification(facts=True, semantic=True, entities=[{"name": "Anna", "role": None}]),
        "I am not sure what Anna likes.",
    )
    response = TurnService(without_postgres).run("alice", request("Anna loves figs; gift ideas?"))
    assert response.reply.text == "I am not sure what Anna likes." + "\n\n" + NOTE
    assert metadata(without_postgres, "m1").outcome == "ok"
    assert {"entity_resolution", "semantic_retrieval", "memory_assembly"} <= set(
        nodes(without_postgres, "m1")
    )
    queued = without_postgres.tasks.tasks  # type: ignore[attr-defined]
    [task] = [ExtractionTask.model_validate_json(t.body) for t in queued]
    assert task.text == "Anna loves figs; gift ideas?"
    assert task.resolved_entities == []  # nobody could be resolved: nothing is guessed
