"""An outbox with a mail relay (fake and Firestore, each against a real SMTP server): the
message goes out once per key, with the Message-ID of the key, and the record says sent."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from scripts.stacklib.mail_server import SmtpServer
from shared.models.agent_data import OutboundEmail, SentMessage
from shared.ports import Outbox
from tests.contract.conftest import unique


def email(body: str = "The meeting moved to 3pm.") -> OutboundEmail:
    return OutboundEmail(
        to=["carla@example.com"], subject="Meeting moved", body=body, reply_to="me@example.net"
    )


def test_a_send_goes_out_once_and_is_recorded_sent(
    delivering_outbox: Outbox, smtp_server: SmtpServer, user_id: str
) -> None:
    key = unique("job-1:s1:approval")
    sent = delivering_outbox.send(user_id, email(), key)
    again = delivering_outbox.send(user_id, email("changed on a redelivery"), key)
    assert (sent.status, sent.relay_code, sent.provider) == ("sent", 250, "smtp")
    assert sent.settled_at is not None and "queued" in sent.relay_reply
    assert again.status == "sent" and again.message_id == sent.message_id
    assert delivering_outbox.get_sent(user_id, key) == sent
    [mail] = smtp_server.mailbox.all()
    assert mail["envelope_to"] == ["carla@example.com"]
    assert mail["to"] == "carla@example.com" and mail["subject"] == "Meeting moved"
    assert mail["reply_to"] == "me@example.net"
    assert mail["from"] == "Assistant <assistant@example.org>"
    assert mail["message_id"] == sent.message_id
    assert sent.message_id.endswith("@example.org>") and sent.id[:40] in sent.message_id
    assert mail["body"].strip() == "The meeting moved to 3pm."


@pytest.mark.parametrize("senders", [4])
def test_concurrent_sends_with_one_key_deliver_once(
    delivering_outbox: Outbox, smtp_server: SmtpServer, user_id: str, senders: int
) -> None:
    key = unique("job/approval")
    start = threading.Barrier(senders)

    def send(n: int) -> SentMessage:
        start.wait()
        return delivering_outbox.send(user_id, email(f"attempt {n}"), key)

    with ThreadPoolExecutor(senders) as pool:
        results = list(pool.map(send, range(senders)))
    assert len(smtp_server.mailbox.all()) == 1
    assert {r.message_id for r in results} == {results[0].message_id}
    assert [r.status for r in results].count("sent") >= 1  # losers may see it pending
    settled = delivering_outbox.get_sent(user_id, key)
    assert settled is not None and settled.status == "sent"


def test_the_message_id_depends_on_the_key_only(
    delivering_outbox: Outbox, smtp_server: SmtpServer, user_id: str
) -> None:
    a = delivering_outbox.send(user_id, email(), unique("k"))
    b = delivering_outbox.send(user_id, email(), unique("k"))
    assert a.message_id != b.message_id
    assert [m["message_id"] for m in smtp_server.mailbox.all()] == [a.message_id, b.message_id]


FAULTS = {  # the record each fault leaves: status, relay code, what the reply says
    "refuse": ("failed", 550, "mailbox unavailable"),
    "down": ("failed", None, "relay unreachable"),
    "silent": ("unknown", None, "no answer after the data"),
}


def test_a_relay_fault_leaves_its_record_and_is_never_retried(
    faulty_outbox: Outbox, faulty_relay: tuple[str, int], user_id: str
) -> None:
    key = unique("job:s1:approval")
    record = faulty_outbox.send(user_id, email(), key)
    status, code, said = FAULTS[faulty_relay[0]]
    assert (record.status, record.relay_code) == (status, code) and said in record.relay_reply
    assert record.settled_at is not None
    assert faulty_outbox.get_sent(user_id, key) == record
    assert faulty_outbox.send(user_id, email("a retry"), key) == record  # nothing sent again
