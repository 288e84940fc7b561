"""LangGraph's own checkpointer conformance suite (``langgraph-checkpoint-conformance``).

One test per capability and backend: ``FirestoreSaver`` on the Firestore emulator, and
LangGraph's ``InMemorySaver`` as the reference (it implements the base capabilities only;
the extended ones, ``delete_for_runs``, ``copy_thread`` and ``prune``, are ours alone).
The suite makes its own uuid thread ids, so runs share the emulator safely.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from typing import Any

import pytest
from google.cloud import firestore
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import (
    BASE_CAPABILITIES,
    EXTENDED_CAPABILITIES,
)
from langgraph.checkpoint.conformance.report import CapabilityResult
from langgraph.checkpoint.memory import InMemorySaver

from shared.adapters.firestore_checkpoints import FirestoreSaver

BASE = sorted(c.value for c in BASE_CAPABILITIES)
EXTENDED = sorted(c.value for c in EXTENDED_CAPABILITIES)


def run_capability(name: str, make: Callable[[], BaseCheckpointSaver[Any]], cap: str) -> None:
    async def factory() -> AsyncGenerator[BaseCheckpointSaver[Any], None]:
        yield make()

    registered = checkpointer_test(name=name)(factory)
    report = asyncio.run(validate(registered, capabilities={cap}))
    result: CapabilityResult = report.results[cap]
    assert result.detected, f"{name} does not implement {cap}"
    assert result.passed, "\n".join(result.failures)
    assert result.tests_passed > 0 and result.tests_failed == 0


@pytest.mark.parametrize("cap", BASE)
def test_in_memory_reference(cap: str) -> None:
    run_capability("InMemorySaver", InMemorySaver, cap)


@pytest.mark.stack
@pytest.mark.usefixtures("stack_env")
@pytest.mark.parametrize("cap", BASE + EXTENDED)
def test_firestore(cap: str, firestore_client: firestore.Client) -> None:
    run_capability("FirestoreSaver", lambda: FirestoreSaver(firestore_client), cap)
