"""Unit fixtures: the composition root filled with in-memory fakes and the scripted model."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from shared.config import Settings
from shared.deps import Deps
from shared.fakes.clock import FixedClock
from shared.fakes.scripted_llm import HashEmbedder, ScriptedLLM
from testkit.fakes import in_memory_stores


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(datetime(2026, 11, 21, 12, 0, tzinfo=UTC))


@pytest.fixture
def llm() -> ScriptedLLM:
    return ScriptedLLM()


@pytest.fixture
def deps(clock: FixedClock, llm: ScriptedLLM) -> Deps:
    settings = Settings(env="test", model_provider="scripted", rate_limit_per_minute=5)
    return Deps(
        settings, clock=clock, llm=llm, embedder=HashEmbedder(dimension=64),
        **in_memory_stores(clock),
    )  # fmt: skip
