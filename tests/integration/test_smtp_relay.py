"""The SMTP adapter against a real SMTP server (aiosmtpd) that accepts, refuses, is down or
goes silent after the data: each outcome is told apart, and nothing is retried."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from pydantic import ValidationError

from scripts.stacklib.mail_server import Behaviour, SmtpServer
from shared.adapters.smtp_mailer import SmtpMailer
from shared.agents.tools.productivity import EmailArgs
from shared.fakes.clock import FixedClock
from shared.fakes.outbox import FakeOutbox
from shared.models.agent_data import OutboundEmail
from tests.unit.test_agent_tools import ALICE, Ports, call

MID = "<abc.approved@example.org>"


def mailer(port: int, timeout: float = 5) -> SmtpMailer:
    return SmtpMailer(
        "127.0.0.1", port, "assistant@example.org", "Assistant", FixedClock(),
        starttls=False, timeout=timeout,
    )  # fmt: skip


def email(**changes: object) -> OutboundEmail:
    fields: dict[str, object] = {"to": ["carla@example.com"], "subject": "Hi", "body": "3pm"}
    return OutboundEmail.model_validate({**fields, **changes})


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[SmtpServer]:
    behaviour: Behaviour = getattr(request, "param", "accept")
    running = SmtpServer(behaviour=behaviour).start()
    yield running
    running.stop()


def test_an_accepted_message_is_sent(server: SmtpServer) -> None:
    answer = mailer(server.port).deliver(email(reply_to="me@example.net"), MID)
    assert (answer.status, answer.code) == ("sent", 250)
    [mail] = server.mailbox.all()
    assert (mail["message_id"], mail["reply_to"]) == (MID, "me@example.net")


@pytest.mark.parametrize("server", ["refuse"], indirect=True)
def test_a_refusing_relay_fails_with_its_answer(server: SmtpServer) -> None:
    answer = mailer(server.port).deliver(email(), MID)
    assert (answer.status, answer.code) == ("failed", 550)
    assert "mailbox unavailable" in answer.reply
    assert server.mailbox.all() == []


def test_a_relay_that_is_down_fails_and_nothing_went_out() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    answer = mailer(port).deliver(email(), MID)
    assert (answer.status, answer.code) == ("failed", None)
    assert answer.reply.startswith("relay unreachable")


@pytest.mark.parametrize("server", ["silent"], indirect=True)
def test_no_answer_after_the_data_is_unknown_and_not_retried(server: SmtpServer) -> None:
    outbox = FakeOutbox(FixedClock(), mailer(server.port, timeout=0.5))
    record = outbox.send("u1", email(), "job:s1:approval")
    assert (record.status, record.relay_code) == ("unknown", None)
    assert "no answer after the data" in record.relay_reply
    assert outbox.send("u1", email(), "job:s1:approval") == record  # not sent again
    assert len(outbox.delivered) == 1


@pytest.mark.parametrize("server", ["refuse"], indirect=True)
def test_a_refused_send_is_recorded_failed(server: SmtpServer) -> None:
    outbox = FakeOutbox(FixedClock(), mailer(server.port))
    record = outbox.send("u1", email(), "job:s1:approval")
    assert (record.status, record.relay_code) == ("failed", 550)


@pytest.mark.parametrize(
    "changes",
    [
        {"subject": "Hi\r\nBcc: everyone@example.com"},
        {"subject": "Hi\nBcc: everyone@example.com"},
        {"to": ["carla@example.com\r\nBcc: everyone@example.com"]},
        {"reply_to": "me@example.net\nBcc: everyone@example.com"},
        {"body": "x" * 10 * 1024 * 1024},
    ],
)
def test_header_injection_and_huge_bodies_are_refused(changes: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        email(**changes)
    args = {"to": ["carla@example.com"], "subject": "Hi", "body": "3pm", **changes}
    args.pop("reply_to", None)
    if set(changes) != {"reply_to"}:
        with pytest.raises(ValidationError):  # the tool's arguments, as the model gives them
            EmailArgs.model_validate(args)


def test_the_composer_refuses_a_line_break_that_got_past_validation() -> None:
    smuggled = OutboundEmail.model_construct(
        channel="email", to=["carla@example.com"], subject="Hi\r\nBcc: x@example.com",
        body="3pm", reply_to=None,
    )  # fmt: skip
    with pytest.raises(ValueError):
        mailer(1).compose(smuggled, MID)


@pytest.mark.parametrize(
    ("server", "status", "told"),
    [
        ("refuse", "failed", "was not sent. The mail server said: 5.1.1 mailbox unavailable"),
        ("silent", "unknown", "I cannot tell whether your email"),
    ],
    indirect=["server"],
)
def test_the_user_is_told_in_the_chat_when_a_send_fails(
    server: SmtpServer, status: str, told: str
) -> None:
    ports = Ports()
    ports.outbox = FakeOutbox(ports.clock, mailer(server.port, timeout=0.5))
    ports.chats.create_chat(ALICE, "chat-1", ports.clock.now())
    key = "job-1:s1:approval-1"
    for _ in range(2):  # a redelivered job tells once
        sent = call(ports, "email_send", key=key, to=["carla@example.com"], subject="3pm",
                    body="The meeting moved to 3pm.")  # fmt: skip
        assert sent["status"] == status
    [notice] = ports.chats.recent_messages(ALICE, "chat-1", 10)
    assert notice.role == "assistant" and told in notice.text
    assert "“3pm” to carla@example.com" in notice.text


def test_the_user_is_told_when_the_relay_is_down() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ports = Ports()
    ports.outbox = FakeOutbox(ports.clock, mailer(port))
    ports.chats.create_chat(ALICE, "chat-1", ports.clock.now())
    sent = call(ports, "email_send", key="k1", to=["carla@example.com"], subject="3pm", body="x")
    assert sent["status"] == "failed" and sent["relay_reply"].startswith("relay unreachable")
    [notice] = ports.chats.recent_messages(ALICE, "chat-1", 10)
    assert "was not sent" in notice.text and "relay unreachable" in notice.text
