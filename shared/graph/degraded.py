"""The turn without its memory: PostgreSQL (facts, persons, data keys) is down.

A memory node wrapped in ``memory_optional`` that finds its store unavailable returns
nothing but ``memory.unavailable``; the turn goes on and answers from the conversation
alone. When the answer would have needed memory (retrieval was asked for, or people were
mentioned), ``memory_note`` says so in the reply, in the chat's language, instead of
letting the model guess. The background extraction is still planned: its task waits in
Cloud Tasks, which retries it until PostgreSQL is back.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from langgraph.runtime import Runtime

from shared.conversation.phrases import phrase
from shared.errors import DependencyUnavailable
from shared.graph.context import TurnContext
from shared.graph.instrument import NodeFn
from shared.graph.state import MemoryState, TurnState

log = logging.getLogger("graph")


def memory_optional(name: str) -> Callable[[NodeFn], NodeFn]:
    def wrap(fn: NodeFn) -> NodeFn:
        @functools.wraps(fn)
        def run(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
            try:
                return fn(state, runtime)
            except DependencyUnavailable as error:
                without(runtime.context, name, error)
                return {"memory": MemoryState(unavailable=True)}

        return run

    return wrap


def without(context: TurnContext, node: str, error: DependencyUnavailable) -> None:
    log.warning(
        "memory unavailable: answering without it",
        extra={"turn_id": context.turn_id, "node": node, "error": error.message},
    )


def needed_memory(state: TurnState) -> bool:
    intent = state.intent
    if intent is None:
        return False
    asked = intent.needs_semantic_retrieval or intent.needs_temporal_retrieval
    return asked or bool(intent.entities)


def memory_note(state: TurnState) -> str:
    """The honest sentence for a reply written without the memory it needed ("" if not)."""
    if not (state.memory.unavailable and needed_memory(state)):
        return ""
    return "\n\n" + phrase("memory_unavailable", state.conversation.language)
