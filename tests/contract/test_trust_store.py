"""TrustStore contract: the fake and Firestore (emulator) behave the same, concurrent outcomes
lose no count, and account erasure takes the trust record with it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Literal

import pytest
from google.cloud import firestore

from shared.adapters.firestore_account import FirestoreAccountStore
from shared.adapters.firestore_trust import FirestoreTrustStore
from shared.fakes.trust import FakeTrustStore
from shared.models.trust import HitlMode, Outcome, TrustRecord
from shared.ports import TrustStore
from shared.services.hitl import record_task_outcome

NOW = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)  # Firestore keeps microseconds

EXPERT = TrustRecord(
    level="expert",
    pinned_mode="human_in_the_loop",
    tasks_completed=250,
    tasks_failed=3,
    serious_incidents=1,
    first_task_at=NOW - timedelta(days=90),
    last_incident_at=NOW - timedelta(days=45),
    level_since=NOW - timedelta(days=10),
)


def replace_with(record: TrustRecord) -> Callable[[TrustRecord], TrustRecord]:
    return lambda _: record


@pytest.fixture
def erase(request: pytest.FixtureRequest, trust_store: TrustStore) -> Callable[[str], object]:
    """Account erasure as the memory function runs it (``users/{uid}`` and below)."""
    if isinstance(trust_store, FakeTrustStore):
        return trust_store.delete_user
    client: firestore.Client = request.getfixturevalue("firestore_client")
    return FirestoreAccountStore(client).delete_user


def test_a_user_without_a_record_is_a_novice_with_nothing_counted(
    trust_store: TrustStore, user_id: str
) -> None:
    record = trust_store.get(user_id)
    assert record == TrustRecord()
    assert (record.level, record.pinned_mode, record.tasks_completed, record.updated_at) == (
        "novice",
        None,
        0,
        None,
    )


def test_an_update_stores_the_changed_record_with_its_time(
    trust_store: TrustStore, user_id: str
) -> None:
    stored = trust_store.update(user_id, replace_with(EXPERT), NOW)
    assert stored == EXPERT.model_copy(update={"updated_at": NOW})
    assert trust_store.get(user_id) == stored


def test_an_update_changes_the_current_record(trust_store: TrustStore, user_id: str) -> None:
    seen: list[TrustRecord] = []

    def count(record: TrustRecord) -> TrustRecord:
        seen.append(record)
        return record.model_copy(update={"tasks_completed": record.tasks_completed + 1})

    trust_store.update(user_id, count, NOW)
    later = NOW + timedelta(minutes=1)
    assert trust_store.update(user_id, count, later).tasks_completed == 2
    assert seen[0] == TrustRecord()
    assert seen[-1] == TrustRecord(tasks_completed=1, updated_at=NOW)
    assert trust_store.get(user_id).updated_at == later


def test_pinning_keeps_the_counters_and_unpinning_follows_the_level(
    trust_store: TrustStore, user_id: str
) -> None:
    trust_store.update(user_id, replace_with(EXPERT), NOW)
    later = NOW + timedelta(hours=1)
    pinned = trust_store.put_settings(user_id, "human_in_command", later)
    assert pinned == EXPERT.model_copy(
        update={"pinned_mode": "human_in_command", "updated_at": later}
    )
    assert trust_store.get(user_id) == pinned
    unpinned = trust_store.put_settings(user_id, None, later)
    assert unpinned == pinned.model_copy(update={"pinned_mode": None})
    assert trust_store.get(user_id) == unpinned


def test_pinning_before_any_task_stores_the_defaults_with_the_mode(
    trust_store: TrustStore, user_id: str
) -> None:
    trust_store.put_settings(user_id, "human_on_the_loop", NOW)
    assert trust_store.get(user_id) == TrustRecord(pinned_mode="human_on_the_loop", updated_at=NOW)


def test_records_are_per_user(trust_store: TrustStore, user_id: str) -> None:
    neighbour = f"{user_id}_2"  # shares the uid as a prefix
    trust_store.update(user_id, replace_with(EXPERT), NOW)
    assert trust_store.get(neighbour) == TrustRecord()
    trust_store.put_settings(neighbour, "human_in_command", NOW)
    assert trust_store.get(user_id).pinned_mode == "human_in_the_loop"


def test_concurrent_outcomes_all_count(trust_store: TrustStore, user_id: str) -> None:
    per_thread, barrier = 12, threading.Barrier(3)
    errors: list[BaseException] = []

    def work(outcome: Outcome | Literal["pin"]) -> None:
        try:
            barrier.wait(10)
            for i in range(per_thread):
                when = NOW + timedelta(seconds=i)
                if outcome == "pin":
                    mode: HitlMode = "human_in_command" if i % 2 else "human_on_the_loop"
                    trust_store.put_settings(user_id, mode, when)
                else:
                    record_task_outcome(trust_store, user_id, outcome, when)
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    kinds: list[Outcome | Literal["pin"]] = ["success", "failure", "pin"]
    threads = [threading.Thread(target=work, args=(kind,)) for kind in kinds]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    record = trust_store.get(user_id)
    assert (record.tasks_completed, record.tasks_failed) == (per_thread, per_thread)
    assert record.first_task_at == NOW


def test_account_erasure_deletes_the_record(
    trust_store: TrustStore, user_id: str, erase: Callable[[str], object]
) -> None:
    trust_store.update(user_id, replace_with(EXPERT), NOW)
    erase(user_id)
    assert trust_store.get(user_id) == TrustRecord()


@pytest.mark.stack
def test_fields_this_version_does_not_know_are_ignored_and_kept(
    firestore_client: firestore.Client, user_id: str
) -> None:
    """Firestore only: documents written by another version of the product."""
    client, trust_store = firestore_client, FirestoreTrustStore(firestore_client)
    path = f"users/{user_id}/settings/trust"
    client.document(path).set({"level": "proficient", "tasks_completed": 60, "badge": "gold"})
    assert trust_store.get(user_id) == TrustRecord(level="proficient", tasks_completed=60)
    stored = trust_store.put_settings(user_id, "human_in_command", NOW)
    assert stored.tasks_completed == 60
    assert (client.document(path).get().to_dict() or {})["badge"] == "gold"  # a newer version's


@pytest.mark.parametrize("bad", ["", "a/b", "..", "__reserved__"])
def test_ids_that_name_another_path_are_refused(trust_store: TrustStore, bad: str) -> None:
    with pytest.raises(ValueError):
        trust_store.get(bad)
    with pytest.raises(ValueError):
        trust_store.update(bad, replace_with(EXPERT), NOW)
    with pytest.raises(ValueError):
        trust_store.put_settings(bad, None, NOW)
