"""IdempotencyStore contract: the fake and Firestore (emulator) behave the same."""

from __future__ import annotations

from datetime import UTC, datetime

from shared.ports import IdempotencyStore
from tests.contract.conftest import unique

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def test_only_the_first_claim_wins(idempotency: IdempotencyStore) -> None:
    key = unique("task")
    assert idempotency.claim(key, NOW, 3600) is True
    assert idempotency.claim(key, NOW, 3600) is False
    assert idempotency.claim(key, NOW, 3600) is False


def test_keys_are_independent(idempotency: IdempotencyStore) -> None:
    first, second = unique("task"), unique("task")
    assert idempotency.claim(first, NOW, 60)
    assert idempotency.claim(second, NOW, 60)


def test_any_key_text_is_accepted(idempotency: IdempotencyStore) -> None:
    # Hashed into the document id: slashes and length do not matter.
    key = unique("projects/p/locations/l/queues/q/tasks") + "/" + "x" * 2000
    assert idempotency.claim(key, NOW, 60)
    assert not idempotency.claim(key, NOW, 60)


def test_a_released_key_can_be_claimed_again(idempotency: IdempotencyStore) -> None:
    key = unique("job")
    assert idempotency.claim(key, NOW, 60)
    idempotency.release(key)
    assert idempotency.claim(key, NOW, 60)
    assert not idempotency.claim(key, NOW, 60)
    idempotency.release(unique("never-claimed"))  # no error
