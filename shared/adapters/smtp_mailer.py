"""``Mailer`` over SMTP: a relay on 587 with STARTTLS in production (Cloud Functions may not
use port 25), the local stack's SMTP server (plain, no login) in dev and test.

The conversation is driven step by step instead of ``sendmail`` so the outcome is known
exactly: anything that goes wrong before the message's data is on the wire is ``failed``
(nothing went out, the relay's code and text are kept); a broken connection or a timeout
after the data went out is ``unknown`` (the relay may have queued it), and is never retried
here or by the outbox.
"""

from __future__ import annotations

import contextlib
import re
import smtplib
import ssl
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime, formataddr

from shared.models.agent_data import OutboundEmail, RelayAnswer
from shared.ports import Clock

MAX_REPLY = 1000


def _answer(status: str, code: int | None, reply: bytes | str) -> RelayAnswer:
    text = reply.decode("utf-8", "replace") if isinstance(reply, bytes) else reply
    return RelayAnswer.model_validate(
        {"status": status, "code": code, "reply": " ".join(text.split())[:MAX_REPLY]}
    )


class SmtpMailer:
    def __init__(
        self,
        host: str,
        port: int,
        sender: str,
        sender_name: str,
        clock: Clock,
        username: str = "",
        password: str = "",
        starttls: bool = True,
        timeout: float = 20.0,
    ) -> None:
        self._host, self._port = host, port
        self._sender, self._sender_name = sender, sender_name
        self._clock = clock
        self._username, self._password = username, password
        self._starttls, self._timeout = starttls, timeout

    @property
    def domain(self) -> str:
        return self._sender.rsplit("@", 1)[-1]

    def compose(self, message: OutboundEmail, message_id: str) -> EmailMessage:
        """The message as it goes out. ``EmailMessage`` refuses CR/LF in a header value:
        a second guard behind the models' validation."""
        mail = EmailMessage()
        mail["From"] = formataddr((self._sender_name, self._sender))
        mail["To"] = ", ".join(message.to)
        if message.reply_to:
            mail["Reply-To"] = message.reply_to
        mail["Subject"] = message.subject
        mail["Message-ID"] = message_id
        mail["Date"] = format_datetime(self._clock.now())
        mail.set_content(message.body)
        return mail

    def deliver(self, message: OutboundEmail, message_id: str) -> RelayAnswer:
        data = self.compose(message, message_id).as_bytes(policy=policy.SMTP)
        try:
            smtp = smtplib.SMTP(self._host, self._port, timeout=self._timeout)
        except (OSError, smtplib.SMTPException) as exc:
            return _answer("failed", None, f"relay unreachable: {exc}")
        try:
            return self._converse(smtp, message, data)
        finally:
            with contextlib.suppress(OSError):
                smtp.close()

    def _converse(self, smtp: smtplib.SMTP, message: OutboundEmail, data: bytes) -> RelayAnswer:
        try:
            smtp.ehlo()
            if self._starttls:
                smtp.starttls(context=ssl.create_default_context())
                smtp.ehlo()
            if self._username:
                smtp.login(self._username, self._password)
            code, reply = smtp.mail(self._sender)
            if code != 250:
                return _answer("failed", code, reply)
            for rcpt in message.to:
                code, reply = smtp.rcpt(rcpt)
                if code not in (250, 251):
                    return _answer("failed", code, reply)
            code, reply = smtp.docmd("DATA")
            if code != 354:
                return _answer("failed", code, reply)
        except smtplib.SMTPResponseException as exc:
            return _answer("failed", exc.smtp_code, exc.smtp_error)
        except (OSError, smtplib.SMTPException) as exc:
            return _answer("failed", None, f"relay connection failed before the data: {exc}")
        return self._send_data(smtp, data)

    def _send_data(self, smtp: smtplib.SMTP, data: bytes) -> RelayAnswer:
        body = re.sub(rb"(?m)^\.", b"..", data)  # dot-stuffing (RFC 5321 4.5.2)
        if not body.endswith(b"\r\n"):
            body += b"\r\n"
        try:
            smtp.send(body + b".\r\n")
            code, reply = smtp.getreply()
        except (OSError, smtplib.SMTPException) as exc:
            return _answer("unknown", None, f"no answer after the data was sent: {exc}")
        if code == 250:
            return _answer("sent", code, reply)
        return _answer("failed", code, reply)
