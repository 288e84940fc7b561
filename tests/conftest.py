"""Test-wide set-up: the test stack's environment and the guard against real model calls.

``scripts/stack up --profile test`` writes ``.stack-test/env``; its values are loaded here
before any Settings is built, so every test talks to the same real local services.
"""

from __future__ import annotations

import os

import pytest

from shared.adapters import model_guard
from testkit.stack_env import STACK_ENV, load_stack_env

STACK_UP = load_stack_env()
os.environ["ENV"] = "test"
# Tests never reach a real model: the scripted provider is the default, and the Vertex and
# local adapters refuse to run unless a test opts in (the fake endpoint, the offline model).
os.environ["MODEL_PROVIDER"] = "scripted"
model_guard.ALLOW_MODEL_REQUESTS = False


@pytest.fixture
def stack_env() -> None:
    """Fail (not skip) when the local stack is missing: CI always starts it."""
    if not STACK_UP:
        pytest.fail(f"the local stack is not up ({STACK_ENV} missing): run `make test`")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """End-to-end tests last: they hold the functions' ports for the rest of the session."""
    items.sort(key=lambda item: item.get_closest_marker("e2e") is not None)
