"""Agent job tests: the scripted team behind the model, and a chat for the jobs to post to."""

from __future__ import annotations

import pytest

from shared.deps import Deps
from shared.fakes.clock import FixedClock
from shared.fakes.scripted_llm import ScriptedLLM
from tests.unit.agents.agent_kit import EchoTool, TeamModel


@pytest.fixture
def team() -> TeamModel:
    return TeamModel()


@pytest.fixture
def llm(team: TeamModel) -> ScriptedLLM:
    return ScriptedLLM(handler=team.handler)


@pytest.fixture
def send() -> EchoTool:
    return EchoTool(name="send", description="Send an email.", sensitive=True, answer="sent")


@pytest.fixture(autouse=True)
def chat(deps: Deps, clock: FixedClock) -> str:
    """The chat "c1" every job of these tests belongs to."""
    deps.conversations.create_chat("alice", "c1", clock.now())
    return "c1"
