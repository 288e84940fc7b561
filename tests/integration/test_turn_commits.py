"""What a turn commits to Firestore (the emulator), counted at the client library: a turn
that asks nothing ends its run in its completion's commit, so no separate commit releases
the chat; a greeting costs two commits, any other turn three (claim, completion, checkpoint).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from google.cloud import firestore

from shared.app.turn import TurnService
from shared.config import Settings
from shared.deps import Deps
from shared.fakes.scripted_llm import HashEmbedder, ScriptedLLM
from testkit.probes import Probe, count_firestore
from tests.unit.turn_kit import classification, request

pytestmark = [pytest.mark.stack, pytest.mark.usefixtures("stack_env")]


@pytest.fixture
def user() -> str:
    return f"u{uuid.uuid4().hex[:12]}"


@pytest.fixture
def counted(user: str) -> Iterator[tuple[Deps, ScriptedLLM, Probe]]:
    settings = Settings(model_provider="scripted")
    llm, probe = ScriptedLLM(), Probe()
    deps = Deps(settings, llm=llm, embedder=HashEmbedder(settings.embedding_dimension))
    count_firestore(deps._firestore, probe)
    yield deps, llm, probe
    deps.account_conversations.delete_user(user)
    deps.close()


def test_a_turn_that_asks_nothing_releases_its_chat_in_its_completion(
    counted: tuple[Deps, ScriptedLLM, Probe], user: str
) -> None:
    deps, llm, probe = counted
    service, chat = TurnService(deps), f"c{uuid.uuid4().hex[:12]}"
    deps.conversations.create_chat(user, chat, deps.clock.now())

    mark = probe.snapshot()
    service.run(user, request("Hello", cmid="g1", chat_id=chat))
    greeting, _ = probe.since(mark)

    llm.add(classification(), "A poem about autumn.")
    mark = probe.snapshot()
    service.run(user, request("Write me a poem about autumn", cmid="s1", chat_id=chat))
    simple, _ = probe.since(mark)

    assert (greeting["fs.commits"], simple["fs.commits"]) == (2, 3)
    stored = firestore.Client(project=deps.settings.gcp_project)
    run = stored.document(f"users/{user}/chats/{chat}").get().to_dict()["run"]
    assert (run["owner"], run["turn_id"], run["lease_until"]) == (None, None, None)
    turn = stored.document(f"users/{user}/turns/s1").get().to_dict()
    assert (turn["status"], turn["lease_expires_at"]) == ("done", None)
