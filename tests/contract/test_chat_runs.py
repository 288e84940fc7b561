"""One turn at a time per chat (ConversationStore), the fake and Firestore alike: the holder,
the queue in arrival order, the three strategies, the heartbeat, and every way out."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from shared.models.domain import ChatRun, TurnClaim
from shared.ports import ConversationStore
from tests.contract.test_conversations import at, message, pending, response

LEASE = 30


def claim(
    store: ConversationStore, user_id: str, cmid: str, seconds: float = 1, **how: Any
) -> TurnClaim:
    owner = how.pop("owner", f"owner-{cmid}")
    return store.claim_turn(
        user_id, cmid, "c1", f"t-{cmid}", at(seconds), LEASE, new_chat=False, owner=owner, **how
    )


def run_of(store: ConversationStore, user_id: str) -> ChatRun:
    chat = store.get_chat(user_id, "c1")
    assert chat is not None
    return chat.run


def held(store: ConversationStore, user_id: str) -> str:
    store.create_chat(user_id, "c1", at(0))
    first = claim(store, user_id, "cm1")
    assert (first.status, first.arrival) == ("new", 1)
    return "owner-cm1"


def test_a_claim_on_a_held_chat_waits_in_the_queue_until_the_holder_finishes(
    conversations: ConversationStore, user_id: str
) -> None:
    held(conversations, user_id)
    waiting = claim(conversations, user_id, "cm2", 2)
    assert (waiting.status, waiting.arrival) == ("queued", 2)
    record = conversations.get_turn(user_id, "cm2")
    assert record is not None and record.status == "queued"
    assert claim(conversations, user_id, "cm2", 3).status == "queued"  # still its turn to wait
    assert claim(conversations, user_id, "cm2", 3, owner="another").status == "running"

    conversations.finish_turn(user_id, "cm1", "c1")
    run = run_of(conversations, user_id)
    assert (run.turn_id, [w.turn_id for w in run.queue]) == (None, ["t-cm2"])
    started = claim(conversations, user_id, "cm2", 4)
    assert (started.status, started.arrival) == ("new", 2)
    run = run_of(conversations, user_id)
    assert (run.turn_id, run.owner, run.queue) == ("t-cm2", "owner-cm2", [])


def test_reject_is_busy_and_writes_nothing(conversations: ConversationStore, user_id: str) -> None:
    held(conversations, user_id)
    refused = claim(conversations, user_id, "cm2", 2, strategy="reject")
    assert refused.status == "busy"
    assert conversations.get_turn(user_id, "cm2") is None
    assert run_of(conversations, user_id).queue == []


def test_interrupt_goes_first_and_asks_the_holder_to_stop(
    conversations: ConversationStore, user_id: str
) -> None:
    holder = held(conversations, user_id)
    assert claim(conversations, user_id, "cm2", 2).status == "queued"
    assert conversations.beat(user_id, "cm1", "c1", holder) == "go"
    assert claim(conversations, user_id, "cm3", 3, strategy="interrupt").status == "queued"
    run = run_of(conversations, user_id)
    assert [w.turn_id for w in run.queue] == ["t-cm3", "t-cm2"] and run.stop
    assert conversations.beat(user_id, "cm1", "c1", holder) == "stop"
    conversations.finish_turn(user_id, "cm1", "c1")
    assert claim(conversations, user_id, "cm2", 4).status == "queued"  # cm3 goes first
    assert claim(conversations, user_id, "cm3", 4).status == "new"
    assert not run_of(conversations, user_id).stop


def test_racing_claims_queue_in_the_order_they_reached_the_chat(
    conversations: ConversationStore, user_id: str
) -> None:
    held(conversations, user_id)
    with ThreadPoolExecutor(max_workers=5) as pool:
        claims = list(pool.map(lambda n: claim(conversations, user_id, f"cm{n}", 2), range(2, 7)))
    assert {c.status for c in claims} == {"queued"}
    assert sorted(c.arrival or 0 for c in claims) == [2, 3, 4, 5, 6]
    queue = run_of(conversations, user_id).queue
    assert [w.arrival for w in queue] == [2, 3, 4, 5, 6]
    by_arrival = {c.arrival: c.turn_id for c in claims}
    assert [w.turn_id for w in queue] == [by_arrival[n] for n in range(2, 7)]


def test_an_expired_holder_and_waiters_that_gave_up_are_passed_over(
    conversations: ConversationStore, user_id: str
) -> None:
    held(conversations, user_id)
    assert claim(conversations, user_id, "cm2", 2, wait_seconds=5).status == "queued"
    later = claim(conversations, user_id, "cm3", LEASE + 10)  # cm1's lease and cm2's wait ran out
    assert (later.status, later.arrival) == ("new", 3)


def test_the_heartbeat_moves_the_leases_on_and_notices_a_lost_chat(
    conversations: ConversationStore, user_id: str
) -> None:
    holder = held(conversations, user_id)
    assert conversations.beat(user_id, "cm1", "c1", holder, lease_until=at(LEASE + 20)) == "go"
    assert run_of(conversations, user_id).lease_until == at(LEASE + 20)
    waiting = claim(conversations, user_id, "cm2", LEASE + 10, wait_seconds=5)
    assert waiting.status == "queued"  # still held
    taken = claim(conversations, user_id, "cm3", LEASE + 30, strategy="reject")
    assert taken.status == "new"  # the lease ran out at last: cm2 gave up long ago
    assert conversations.beat(user_id, "cm1", "c1", holder) == "lost"
    assert conversations.beat(user_id, "never", "c9", "x", lease_until=at(50)) == "gone"


def test_leaving_the_queue_fails_the_turn_so_it_can_be_sent_again(
    conversations: ConversationStore, user_id: str
) -> None:
    held(conversations, user_id)
    assert claim(conversations, user_id, "cm2", 2).status == "queued"
    conversations.leave_queue(user_id, "cm2", "c1", "owner-cm2", at(3))
    record = conversations.get_turn(user_id, "cm2")
    assert record is not None and record.status == "failed"
    assert run_of(conversations, user_id).queue == []
    conversations.finish_turn(user_id, "cm1", "c1")
    assert claim(conversations, user_id, "cm2", 4, owner="retry").status == "new"


def test_a_released_holder_frees_the_chat_and_a_completed_turn_stays_completed(
    conversations: ConversationStore, user_id: str
) -> None:
    holder = held(conversations, user_id)
    conversations.release_turn(user_id, "cm1", "c1", holder)
    record = conversations.get_turn(user_id, "cm1")
    assert record is not None and record.status == "failed"
    assert run_of(conversations, user_id).turn_id is None
    second = claim(conversations, user_id, "cm2", 2)
    conversations.complete_turn(
        user_id, "cm2", [message("m2", 2)], response("c1", second.turn_id), at(2)
    )
    conversations.release_turn(user_id, "cm2", "c1", "owner-cm2")
    done = conversations.get_turn(user_id, "cm2")
    assert done is not None and done.status == "done"
    assert run_of(conversations, user_id).turn_id is None


def test_finishing_releases_the_chat_and_may_leave_a_question_waiting(
    conversations: ConversationStore, user_id: str
) -> None:
    held(conversations, user_id)
    question = pending("t-cm1", 1)
    conversations.finish_turn(user_id, "cm1", "c1", control=question)
    chat = conversations.get_chat(user_id, "c1")
    assert chat is not None and chat.control == question and chat.run.turn_id is None
    second = claim(conversations, user_id, "cm2", 2)
    conversations.complete_turn(
        user_id, "cm2", [message("m2", 2)], response("c1", second.turn_id), at(2), finish=True
    )
    assert run_of(conversations, user_id).turn_id is None
    assert claim(conversations, user_id, "cm3", 3, strategy="reject").status == "new"
