"""What the push relay keeps of the dev stack's Pub/Sub messages (scripts/stacklib/
kept_messages.py); tests/integration/test_kept_messages.py runs it on the real emulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.stacklib.kept_messages import Keeper, Message, instant, load, pushed, save
from scripts.stacklib.profile import Profile
from scripts.stacklib.services import build

TOPIC = "projects/p/topics/jobs"


WHEN = "2026-11-28T10:19:26.914000Z"


def message(message_id: str, key: str = "", when: str = WHEN) -> Message:
    return Message(TOPIC, message_id, message_id.encode(), {"job_id": message_id}, key, when)


def test_a_message_leaves_once_its_push_is_acknowledged() -> None:
    keeper = Keeper(5)
    keeper.record(message("1"))
    keeper.record(message("2"))
    keeper.settle((TOPIC, "1", WHEN), acknowledged=True)
    assert [m.message_id for m in keeper.pending()] == ["2"]


def test_a_push_answered_before_its_copy_arrived_is_not_kept() -> None:
    keeper = Keeper(5)
    keeper.settle((TOPIC, "1", WHEN), acknowledged=True)
    keeper.record(message("1"))
    assert keeper.pending() == []


def test_a_message_stays_until_the_last_attempt_fails() -> None:
    keeper = Keeper(5)
    keeper.record(message("1"))
    for _ in range(4):
        keeper.settle((TOPIC, "1", WHEN), acknowledged=False)
    assert len(keeper.pending()) == 1  # Pub/Sub will push it again
    keeper.settle((TOPIC, "1", WHEN), acknowledged=False)
    assert keeper.pending() == []  # dead-lettered by the emulator


def test_ids_are_told_apart_by_topic() -> None:
    keeper = Keeper(5)
    keeper.record(message("1"))
    keeper.settle(("projects/p/topics/other", "1", WHEN), acknowledged=True)
    assert len(keeper.pending()) == 1


def test_ids_are_told_apart_by_publish_time() -> None:
    """The emulator numbers messages from 1 again after each start."""
    keeper = Keeper(5, [message("1")])
    keeper.record(message("1", when="2026-11-29T08:00:00.000000Z"))
    keeper.settle((TOPIC, "1", WHEN), acknowledged=True)
    assert [m.publish_time for m in keeper.pending()] == ["2026-11-29T08:00:00.000000Z"]


def test_a_message_published_again_is_kept_as_its_copy() -> None:
    old = [message("1", "user"), message("2", "user"), message("3")]
    keeper = Keeper(5, old)
    later = "2026-11-29T08:00:00.000000Z"
    for n, kept in enumerate(old, start=1):
        keeper.record(message(str(n), kept.ordering_key, later))  # the copy, a new message
        keeper.forget(kept)
    assert [(m.message_id, m.ordering_key, m.publish_time) for m in keeper.pending()] == [
        ("1", "user", later), ("2", "user", later), ("3", "", later),
    ]  # fmt: skip


def test_one_spelling_of_a_publish_time() -> None:
    from datetime import UTC, datetime

    pushed_text = "2026-11-28T10:19:26.914Z"  # the emulator's push body
    copied = datetime(2026, 11, 28, 10, 19, 26, 914000, tzinfo=UTC)  # the client's
    assert instant(pushed_text) == instant(copied) == WHEN


def test_the_file_holds_data_attributes_and_ordering_keys(tmp_path: Path) -> None:
    kept = [message("1", "user"), Message(TOPIC, "2", b"\x00\xff", {}, "", "2026-11-28T10:00Z")]
    save(str(tmp_path / "kept.json"), kept)
    assert load(str(tmp_path / "kept.json")) == kept


@pytest.mark.parametrize(
    "broken",
    [
        "{not json",
        '{"messages": [{"topic": "t"}]}',
        '{"messages": [{"topic": "t", "message_id": "1", "data": "!!", "attributes": {},'
        ' "ordering_key": "", "publish_time": ""}]}',
        '{"messages": [{"topic": "t", "message_id": "1", "data": "", "attributes": {"a": 1},'
        ' "ordering_key": "", "publish_time": ""}]}',
    ],
)
def test_an_unreadable_file_is_set_aside(tmp_path: Path, broken: str) -> None:
    (tmp_path / "kept.json").write_text(broken)
    assert load(str(tmp_path / "kept.json")) == []
    assert (tmp_path / "kept.unreadable").read_text() == broken


PUBLISHED = '"publishTime": "2026-11-28T10:19:26.914Z"'


@pytest.mark.parametrize(
    ("path", "body", "expected"),
    [
        (f"/{TOPIC}", '{"message": {"messageId": "7", %s}}', (TOPIC, "7", WHEN)),
        (f"/{TOPIC}", '{"message": {"message_id": "7", %s}}', (TOPIC, "7", WHEN)),
        ("/", '{"message": {"messageId": "7", %s}}', None),
        (f"/{TOPIC}", '{"message": {"messageId": "7"}}', None),
        (f"/{TOPIC}", '{"message": {"messageId": "7", "publishTime": "soon"}}', None),
        (f"/{TOPIC}", "not json", None),
        (f"/{TOPIC}", '{"message": {"messageId": 7, %s}}', None),
        (f"/{TOPIC}", '{"message": []}', None),
    ],
)
def test_a_push_names_its_message(
    path: str, body: str, expected: tuple[str, str, str] | None
) -> None:
    text = body % PUBLISHED if "%s" in body else body
    assert pushed(path, text.encode()) == expected


def test_only_the_dev_stack_keeps_messages_and_in_its_state_dir() -> None:
    def relay(profile: str) -> list[str]:
        return next(s.command for s in build(Profile(profile)) if s.name == "push-relay")

    dev = Profile("dev")
    keep = [arg for arg in relay("dev") if arg.startswith("--keep=")]
    assert keep == [f"--keep={dev.state / 'pubsub-kept.json'}"]  # `down --wipe` deletes it
    assert not any(arg.startswith("--keep") for arg in relay("test"))  # starts empty
