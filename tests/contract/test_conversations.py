"""ConversationStore contract: the fake and Firestore (emulator) behave the same."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared.errors import Conflict, NotFound
from shared.models.domain import (
    ChatUpdate,
    HitlControl,
    Message,
    NodeRun,
    TurnMetadata,
    TurnRecord,
)
from shared.models.wire import Interrupt, InterruptOption, Reply, TurnResponse
from shared.ports import ConversationStore
from tests.contract.conftest import unique

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
LEASE = 120


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def message(
    message_id: str, seconds: float, role: str = "user", turn_id: str | None = None
) -> Message:
    return Message.model_validate(
        {
            "id": message_id,
            "role": role,
            "text": f"text of {message_id}",
            "created_at": at(seconds),
            "turn_id": turn_id,
        }
    )


def response(chat_id: str, turn_id: str, text: str = "hello") -> TurnResponse:
    return TurnResponse(chat_id=chat_id, turn_id=turn_id, reply=Reply(text=text))


def count(store: ConversationStore, user_id: str, chat_id: str) -> int:
    counting: Any = store  # both adapters keep the counter; it is not part of the port
    return int(counting.message_count(user_id, chat_id))


def pending(turn_id: str, seconds: float) -> HitlControl:
    interrupt = Interrupt(
        id=f"i-{turn_id}",
        kind="disambiguation",
        question="Which Anna?",
        options=[
            InterruptOption(id="p1", label="Anna (sister)"),
            InterruptOption(id="p2", label="Anna K."),
        ],
    )
    return HitlControl(
        status="pending",
        interrupt=interrupt,
        target="turn",
        thread_id=turn_id,
        asked_at=at(seconds),
        timeout_at=at(seconds + 1800),
    )


def metadata(route: str = "answer") -> TurnMetadata:
    return TurnMetadata(
        route=route,
        flags={"has_facts": True, "needs_agent": False},
        nodes=[
            NodeRun(node="classify", ms=12.5, input_tokens=40, output_tokens=8),
            NodeRun(node="answer", ms=301.25, input_tokens=120, output_tokens=64),
        ],
        input_tokens=160,
        output_tokens=72,
        cost_usd=0.000125,
        graph_ms=320.0,
        extraction_enqueued=True,
        interrupt_kind="disambiguation",
    )


def run_turn(
    store: ConversationStore,
    user_id: str,
    turn: str,
    seconds: float,
    chat_update: ChatUpdate | None = None,
    new_chat: bool = False,
) -> None:
    """Claim and complete turn ``turn`` of chat "c1": a user and an assistant message."""
    store.claim_turn(user_id, f"cm-{turn}", "c1", turn, at(seconds), LEASE)
    messages = [
        message(f"{turn}-u", seconds, "user", turn),
        message(f"{turn}-a", seconds, "assistant", turn),
    ]
    store.complete_turn(
        user_id,
        f"cm-{turn}",
        messages,
        response("c1", turn),
        at(seconds),
        new_chat=new_chat,
        metadata=metadata(),
        chat_update=chat_update,
    )


# -- chats and messages ---------------------------------------------------------------------
def test_create_then_get_chat(conversations: ConversationStore, user_id: str) -> None:
    assert conversations.get_chat(user_id, "c1") is None
    created = conversations.create_chat(user_id, "c1", at(0))
    assert (created.id, created.user_id, created.created_at) == ("c1", user_id, at(0))
    fetched = conversations.get_chat(user_id, "c1")
    assert fetched is not None
    assert (fetched.id, fetched.created_at, fetched.summary) == ("c1", at(0), "")
    assert (fetched.summarized_until, fetched.control) == (None, HitlControl())
    assert type(fetched.created_at) is datetime  # not the driver's subclass


def test_create_chat_twice_keeps_the_first(conversations: ConversationStore, user_id: str) -> None:
    conversations.create_chat(user_id, "c1", at(0))
    again = conversations.create_chat(user_id, "c1", at(50))
    assert again.created_at == at(0)


def test_another_users_chat_is_not_found(conversations: ConversationStore, user_id: str) -> None:
    other = unique("user")
    conversations.create_chat(user_id, "shared-id", at(0))
    assert conversations.append_message(user_id, "shared-id", message("m1", 1))

    assert conversations.get_chat(other, "shared-id") is None
    assert conversations.recent_messages(other, "shared-id", 10) == []
    with pytest.raises(NotFound):
        conversations.append_message(other, "shared-id", message("m2", 2))
    assert [m.id for m in conversations.recent_messages(user_id, "shared-id", 10)] == ["m1"]


def test_list_chats_is_the_users_own_most_recent_first(
    conversations: ConversationStore, user_id: str
) -> None:
    assert conversations.list_chats(user_id, 10) == []
    for chat_id, seconds in (("older", 0), ("newest", 1), ("middle", 2)):
        conversations.create_chat(user_id, chat_id, at(seconds))
    assert conversations.append_message(user_id, "newest", message("m1", 9))
    assert conversations.append_message(user_id, "middle", message("m2", 5))
    conversations.create_chat(unique("user"), "foreign", at(20))  # another user's

    listed = conversations.list_chats(user_id, 10)
    assert [(c.id, c.updated_at, c.message_count) for c in listed] == [
        ("newest", at(9), 1),
        ("middle", at(5), 1),
        ("older", at(0), 0),
    ]
    assert [c.id for c in conversations.list_chats(user_id, 2)] == ["newest", "middle"]
    assert conversations.list_chats(user_id, 0) == []


def test_append_message_is_idempotent_on_its_id(
    conversations: ConversationStore, user_id: str
) -> None:
    conversations.create_chat(user_id, "c1", at(0))
    assert conversations.append_message(user_id, "c1", message("m1", 1)) is True
    assert conversations.append_message(user_id, "c1", message("m1", 1)) is False
    assert len(conversations.recent_messages(user_id, "c1", 10)) == 1
    assert count(conversations, user_id, "c1") == 1
    chat = conversations.get_chat(user_id, "c1")
    assert chat is not None and chat.updated_at == at(1)


def test_recent_messages_are_the_newest_in_order(
    conversations: ConversationStore, user_id: str
) -> None:
    conversations.create_chat(user_id, "c1", at(0))
    # Inserted out of order; "m3a"/"m3b" share a timestamp, so the id breaks the tie.
    for msg in [
        message("m5", 5),
        message("m3b", 3),
        message("m1", 1),
        message("m3a", 3),
        message("m2", 2),
        message("m4", 4, role="assistant"),
    ]:
        assert conversations.append_message(user_id, "c1", msg)

    everything = conversations.recent_messages(user_id, "c1", 100)
    assert [m.id for m in everything] == ["m1", "m2", "m3a", "m3b", "m4", "m5"]
    assert [m.id for m in conversations.recent_messages(user_id, "c1", 3)] == ["m3b", "m4", "m5"]
    assert conversations.recent_messages(user_id, "c1", 0) == []
    assert everything[4] == message("m4", 4, role="assistant")


def test_recent_messages_after_a_time_exclude_it(
    conversations: ConversationStore, user_id: str
) -> None:
    conversations.create_chat(user_id, "c1", at(0))
    for msg in [message("m1", 1), message("m2", 2), message("m2b", 2.000001)]:
        assert conversations.append_message(user_id, "c1", msg)
    for msg in [message("m3b", 3), message("m3a", 3), message("m4", 4)]:
        assert conversations.append_message(user_id, "c1", msg)

    def ids(limit: int, after: datetime | None) -> list[str]:
        return [m.id for m in conversations.recent_messages(user_id, "c1", limit, after=after)]

    assert ids(10, at(2)) == ["m2b", "m3a", "m3b", "m4"]  # one microsecond later counts
    assert ids(10, at(1.999999)) == ["m2", "m2b", "m3a", "m3b", "m4"]
    assert ids(2, at(2)) == ["m3b", "m4"]  # still the newest, oldest first
    assert ids(10, at(3)) == ["m4"]
    assert ids(10, at(4)) == []
    assert ids(0, at(0)) == []
    assert ids(10, None) == ids(10, at(0)) == ["m1", "m2", "m2b", "m3a", "m3b", "m4"]


def test_ids_that_would_name_another_path_are_refused(
    conversations: ConversationStore, user_id: str
) -> None:
    with pytest.raises(ValueError):
        conversations.get_chat(user_id, "c1/messages/x")


# -- turns ----------------------------------------------------------------------------------
def test_claim_new_then_running_then_done_replays(
    conversations: ConversationStore, user_id: str
) -> None:
    conversations.create_chat(user_id, "c1", at(0))
    first = conversations.claim_turn(user_id, "cm1", "c1", "t1", at(1), LEASE)
    assert (first.status, first.turn_id, first.chat_id, first.response) == ("new", "t1", "c1", None)

    while_running = conversations.claim_turn(user_id, "cm1", "c1", "t2", at(2), LEASE)
    assert (while_running.status, while_running.turn_id) == ("running", "t1")

    reply = response("c1", "t1")
    conversations.complete_turn(
        user_id,
        "cm1",
        [message("t1-u", 1, "user", "t1"), message("t1-a", 3, "assistant", "t1")],
        reply,
        at(3),
    )
    replay = conversations.claim_turn(user_id, "cm1", "c1", "t3", at(4), LEASE)
    assert (replay.status, replay.turn_id, replay.chat_id) == ("done", "t1", "c1")
    assert replay.response == reply

    stored = conversations.recent_messages(user_id, "c1", 10)
    assert [(m.id, m.turn_id) for m in stored] == [("t1-u", "t1"), ("t1-a", "t1")]
    assert count(conversations, user_id, "c1") == 2
    chat = conversations.get_chat(user_id, "c1")
    assert chat is not None and chat.updated_at == at(3)


def test_expired_lease_is_reclaimed_with_a_new_turn_in_the_same_chat(
    conversations: ConversationStore, user_id: str
) -> None:
    conversations.claim_turn(user_id, "cm1", "c1", "t1", at(0), LEASE)
    just_before = conversations.claim_turn(user_id, "cm1", "c-other", "t2", at(LEASE - 1), LEASE)
    assert just_before.status == "running"

    after = conversations.claim_turn(user_id, "cm1", "c-other", "t2", at(LEASE + 1), LEASE)
    assert (after.status, after.turn_id, after.chat_id) == ("new", "t2", "c1")
    # The new claim has a lease of its own.
    again = conversations.claim_turn(user_id, "cm1", "c1", "t3", at(LEASE + 2), LEASE)
    assert (again.status, again.turn_id) == ("running", "t2")


def test_released_turn_can_be_claimed_again_at_once(
    conversations: ConversationStore, user_id: str
) -> None:
    conversations.claim_turn(user_id, "cm1", "c1", "t1", at(0), LEASE)
    conversations.release_turn(user_id, "cm1")
    retry = conversations.claim_turn(user_id, "cm1", "c2", "t2", at(1), LEASE)
    assert (retry.status, retry.turn_id, retry.chat_id) == ("new", "t2", "c1")
    conversations.release_turn(user_id, "never-claimed")  # nothing to release: no error


def test_turns_are_scoped_to_their_user(conversations: ConversationStore, user_id: str) -> None:
    conversations.claim_turn(user_id, "cm1", "c1", "t1", at(0), LEASE)
    other = conversations.claim_turn(unique("user"), "cm1", "c9", "t9", at(1), LEASE)
    assert (other.status, other.turn_id, other.chat_id) == ("new", "t9", "c9")


def test_completing_twice_writes_once(conversations: ConversationStore, user_id: str) -> None:
    conversations.create_chat(user_id, "c1", at(0))
    conversations.claim_turn(user_id, "cm1", "c1", "t1", at(0), LEASE)
    messages = [message("t1-u", 1, "user", "t1"), message("t1-a", 2, "assistant", "t1")]
    conversations.complete_turn(user_id, "cm1", messages, response("c1", "t1"), at(2))
    conversations.complete_turn(user_id, "cm1", messages, response("c1", "t1", "other"), at(9))

    assert len(conversations.recent_messages(user_id, "c1", 10)) == 2
    assert count(conversations, user_id, "c1") == 2
    replay = conversations.claim_turn(user_id, "cm1", "c1", "t2", at(10), LEASE)
    assert replay.response is not None and replay.response.reply.text == "hello"


def test_completing_an_unclaimed_turn_is_a_conflict(
    conversations: ConversationStore, user_id: str
) -> None:
    conversations.create_chat(user_id, "c1", at(0))
    with pytest.raises(Conflict):
        conversations.complete_turn(
            user_id, "never-claimed", [message("m1", 1)], response("c1", "t1"), at(1)
        )
    assert conversations.recent_messages(user_id, "c1", 10) == []


def test_concurrent_claims_start_the_turn_once(
    conversations: ConversationStore, user_id: str
) -> None:
    def claim(turn_id: str) -> str:
        return conversations.claim_turn(user_id, "cm1", "c1", turn_id, at(0), LEASE).status

    with ThreadPoolExecutor(max_workers=4) as pool:
        statuses = list(pool.map(claim, ["t1", "t2", "t3", "t4"]))
    assert sorted(statuses) == ["new", "running", "running", "running"]


# -- turn records and chat updates ---------------------------------------------------------
def test_get_turn_follows_the_turn_and_keeps_its_metadata(
    conversations: ConversationStore, user_id: str
) -> None:
    assert conversations.get_turn(user_id, "cm-t1") is None
    conversations.create_chat(user_id, "c1", at(0))
    conversations.claim_turn(user_id, "cm-t1", "c1", "t1", at(1), LEASE)
    running = TurnRecord(status="running", chat_id="c1", turn_id="t1", arrival=1)
    assert conversations.get_turn(user_id, "cm-t1") == running
    assert conversations.get_turn(unique("user"), "cm-t1") is None

    run_turn(conversations, user_id, "t1", 1)
    done = conversations.get_turn(user_id, "cm-t1")
    assert done == TurnRecord(
        status="done",
        chat_id="c1",
        turn_id="t1",
        response=response("c1", "t1"),
        metadata=metadata(),
        arrival=1,
    )


def test_a_turn_without_metadata_records_none(
    conversations: ConversationStore, user_id: str
) -> None:
    conversations.create_chat(user_id, "c1", at(0))
    conversations.claim_turn(user_id, "cm1", "c1", "t1", at(1), LEASE)
    conversations.complete_turn(user_id, "cm1", [message("t1-u", 1)], response("c1", "t1"), at(1))
    record = conversations.get_turn(user_id, "cm1")
    assert record is not None and (record.status, record.metadata) == ("done", None)
    conversations.claim_turn(user_id, "cm2", "c1", "t2", at(2), LEASE)
    conversations.release_turn(user_id, "cm2")
    failed = conversations.get_turn(user_id, "cm2")
    assert failed == TurnRecord(status="failed", chat_id="c1", turn_id="t2", arrival=2)


def test_chat_update_sets_summary_and_control_and_releases_it(
    conversations: ConversationStore, user_id: str
) -> None:
    conversations.create_chat(user_id, "c1", at(0))
    asked = pending("t1", 1.000123)
    update = ChatUpdate(summary="Talked about Anna.", summarized_until=at(0.5), control=asked)
    run_turn(conversations, user_id, "t1", 1, update)
    chat = conversations.get_chat(user_id, "c1")
    assert chat is not None
    assert (chat.summary, chat.summarized_until, chat.control) == (
        "Talked about Anna.",
        at(0.5),
        asked,
    )
    assert (chat.updated_at, count(conversations, user_id, "c1")) == (at(1), 2)

    run_turn(conversations, user_id, "t2", 2, ChatUpdate())  # no summary, no pending: kept
    kept = conversations.get_chat(user_id, "c1")
    assert kept is not None and (kept.summary, kept.summarized_until, kept.control) == (
        "Talked about Anna.",
        at(0.5),
        asked,
    )
    assert kept.updated_at == at(2)

    replaced = pending("t3", 3)  # a new question replaces the old one
    run_turn(conversations, user_id, "t3", 3, ChatUpdate(control=replaced))
    chat = conversations.get_chat(user_id, "c1")
    assert chat is not None and chat.control == replaced

    cleared = ChatUpdate(
        summary="Anna is the sister.", summarized_until=at(3), control=HitlControl()
    )
    run_turn(conversations, user_id, "t4", 4, cleared)
    chat = conversations.get_chat(user_id, "c1")
    assert chat is not None
    assert (chat.summary, chat.summarized_until, chat.control) == (
        "Anna is the sister.",
        at(3),
        HitlControl(),
    )
    run_turn(conversations, user_id, "t5", 5, ChatUpdate(control=HitlControl()))  # idle again
    assert count(conversations, user_id, "c1") == 10
    again = conversations.create_chat(user_id, "c1", at(9))  # an existing chat, read back whole
    assert again == conversations.get_chat(user_id, "c1")


def test_a_new_chat_is_created_with_its_update(
    conversations: ConversationStore, user_id: str
) -> None:
    asked = pending("t1", 1)
    update = ChatUpdate(summary="First words.", summarized_until=at(1), control=asked)
    run_turn(conversations, user_id, "t1", 1, update, new_chat=True)
    chat = conversations.get_chat(user_id, "c1")
    assert chat is not None
    assert (chat.created_at, chat.updated_at, chat.summary) == (at(1), at(1), "First words.")
    assert (chat.summarized_until, chat.control) == (at(1), asked)
    assert count(conversations, user_id, "c1") == 2


def test_an_unclaimed_new_chat_turn_creates_nothing(
    conversations: ConversationStore, user_id: str
) -> None:
    with pytest.raises(Conflict):
        conversations.complete_turn(
            user_id,
            "never-claimed",
            [message("m1", 1)],
            response("c1", "t1"),
            at(1),
            new_chat=True,
            chat_update=ChatUpdate(control=pending("t1", 1)),
        )
    assert conversations.get_chat(user_id, "c1") is None


def test_completing_twice_changes_neither_metadata_nor_chat(
    conversations: ConversationStore, user_id: str
) -> None:
    conversations.create_chat(user_id, "c1", at(0))
    conversations.claim_turn(user_id, "cm1", "c1", "t1", at(1), LEASE)
    messages = [message("t1-u", 1, "user", "t1"), message("t1-a", 2, "assistant", "t1")]
    first = ChatUpdate(summary="first", summarized_until=at(1), control=pending("t1", 2))
    conversations.complete_turn(
        user_id,
        "cm1",
        messages,
        response("c1", "t1"),
        at(2),
        metadata=metadata(),
        chat_update=first,
    )
    before = conversations.get_chat(user_id, "c1")
    conversations.complete_turn(
        user_id,
        "cm1",
        messages,
        response("c1", "t1", "other"),
        at(9),
        metadata=metadata("agent"),
        chat_update=ChatUpdate(summary="second", summarized_until=at(9), control=HitlControl()),
    )
    assert conversations.get_chat(user_id, "c1") == before
    record = conversations.get_turn(user_id, "cm1")
    assert record is not None and record.metadata == metadata()
    assert record.response == response("c1", "t1")
    assert count(conversations, user_id, "c1") == 2
