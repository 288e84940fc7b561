"""The Firestore client when nothing answers: every call gives up within its deadline (the
generated defaults retry for minutes), as ``DependencyUnavailable`` through the adapters."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from shared.adapters.firestore_client import bounded_client
from shared.adapters.firestore_conversations import FirestoreConversationStore
from shared.errors import DependencyUnavailable
from testkit.faults import free_port

DEADLINE = 1.0


@pytest.fixture
def nowhere(monkeypatch: pytest.MonkeyPatch) -> Iterator[FirestoreConversationStore]:
    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", f"127.0.0.1:{free_port()}")
    client = bounded_client("local-project", DEADLINE)
    yield FirestoreConversationStore(client)
    client.close()


# Unbounded, the two calls would retry for 300 s each: the test's own timeout catches that.
@pytest.mark.timeout(90)
def test_reads_give_up_within_the_deadline(
    nowhere: FirestoreConversationStore,
) -> None:
    with pytest.raises(DependencyUnavailable):
        nowhere.get_chat("u1", "c1")
    with pytest.raises(DependencyUnavailable):
        nowhere.recent_messages("u1", "c1", 10)
