"""Outbox contract: the fake and Firestore (emulator) send once per key, also under races."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from shared.models.agent_data import OutboundEmail, SentMessage
from shared.ports import Outbox
from tests.contract.conftest import unique


def email(body: str = "See you at 8.") -> OutboundEmail:
    return OutboundEmail(to=["bea@example.com"], subject="Dinner", body=body)


def test_the_first_send_is_recorded(outbox: Outbox, user_id: str) -> None:
    key = unique("job-1/approval")
    sent = outbox.send(user_id, email(), key)
    assert (sent.message, sent.idempotency_key) == (email(), key)
    assert outbox.get_sent(user_id, key) == sent
    assert outbox.get_sent(user_id, unique("other")) is None


def test_a_second_send_with_the_key_returns_the_first_record(outbox: Outbox, user_id: str) -> None:
    key = unique("job-1/approval")
    first = outbox.send(user_id, email("first"), key)
    again = outbox.send(user_id, email("changed on the retry"), key)
    assert again == first and again.message.body == "first"


def test_keys_and_users_are_independent(outbox: Outbox, user_id: str) -> None:
    key = unique("k")
    mine = outbox.send(user_id, email("mine"), key)
    other_key = outbox.send(user_id, email("other key"), unique("k"))
    neighbour = outbox.send(f"{user_id}_2", email("neighbour"), key)
    assert {mine.message.body, other_key.message.body, neighbour.message.body} == {
        "mine",
        "other key",
        "neighbour",
    }
    assert outbox.get_sent(user_id, key) == mine


def test_any_key_text_is_accepted(outbox: Outbox, user_id: str) -> None:
    key = unique("thread/with/slashes") + "x" * 1000
    assert outbox.send(user_id, email(), key) == outbox.get_sent(user_id, key)


@pytest.mark.parametrize("bad", ["", "x" * 1501])
def test_keys_out_of_bounds_are_refused(outbox: Outbox, user_id: str, bad: str) -> None:
    with pytest.raises(ValueError):
        outbox.send(user_id, email(), bad)


@pytest.mark.parametrize("senders", [2, 8])
def test_concurrent_sends_with_one_key_record_one_message(
    outbox: Outbox, user_id: str, senders: int
) -> None:
    key = unique("job/approval")
    start = threading.Barrier(senders)

    def send(n: int) -> SentMessage:
        start.wait()
        return outbox.send(user_id, email(f"attempt {n}"), key)

    with ThreadPoolExecutor(senders) as pool:
        results = list(pool.map(send, range(senders)))
    winner = outbox.get_sent(user_id, key)
    assert winner is not None
    assert all(result == winner for result in results)  # every caller got the one record
    delivered = getattr(outbox, "delivered", None)  # the fake also shows what went out
    if delivered is not None:
        assert [record for _, record in delivered] == [winner]
