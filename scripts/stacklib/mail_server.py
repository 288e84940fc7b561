"""The local stack's mail relay: a real SMTP server (aiosmtpd) that keeps what it receives,
and a small web page that shows it (the stack's ``mail`` and ``mail-web`` ports). Tests of
the relay's faults start one in-process with another ``behaviour``.

    python -m scripts.stacklib.mail_server --smtp-port P --web-port Q --state-dir DIR

The page: ``/`` lists the messages (newest first), ``/messages`` is the same as JSON
(what the e2e tests read), ``/healthz`` answers ok; ``POST /behaviour`` switches how the
SMTP side answers (the e2e tests' relay faults).

``behaviour`` picks how it answers: ``accept`` (250, the message kept), ``refuse`` (550 to
every recipient: a relay that will not take the mail), ``silent`` (takes the data and never
answers it: the outcome is unknown to the sender, until the connection is closed).
"""

from __future__ import annotations

import argparse
import asyncio
import html
import json
import threading
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session

Behaviour = Literal["accept", "refuse", "silent"]
BEHAVIOURS = ("accept", "refuse", "silent")


def describe(raw: bytes, rcpt_tos: list[str]) -> dict[str, Any]:
    """What a person checks of a received message: the envelope and the headers that
    matter, and the text."""
    parsed = message_from_bytes(raw, policy=policy.default)
    assert isinstance(parsed, EmailMessage)
    body = parsed.get_body(preferencelist=("plain",))
    return {
        "envelope_to": rcpt_tos,
        "from": str(parsed["From"] or ""),
        "to": str(parsed["To"] or ""),
        "reply_to": str(parsed["Reply-To"] or ""),
        "subject": str(parsed["Subject"] or ""),
        "message_id": str(parsed["Message-ID"] or "").strip(),  # a long one is folded
        "date": str(parsed["Date"] or ""),
        "body": body.get_content() if body is not None else "",
    }


@dataclass
class Mailbox:
    """What the server received, in order; optionally also kept as JSON lines in a file."""

    path: Path | None = None
    received: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def keep(self, mail: dict[str, Any]) -> None:
        with self.lock:
            self.received.append(mail)
            if self.path is not None:
                with self.path.open("a", encoding="utf-8") as out:
                    out.write(json.dumps(mail) + "\n")

    def all(self) -> list[dict[str, Any]]:
        if self.path is not None and self.path.exists():
            lines = self.path.read_text(encoding="utf-8").splitlines()
            return [json.loads(line) for line in lines if line.strip()]
        with self.lock:
            return list(self.received)


class _Handler:
    def __init__(self, mailbox: Mailbox, behaviour: Behaviour) -> None:
        self.mailbox, self.behaviour = mailbox, behaviour
        self.release = asyncio.Event()  # a silent server answers nothing until set

    async def handle_RCPT(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, options: list[str]
    ) -> str:
        if self.behaviour == "refuse":
            return "550 5.1.1 mailbox unavailable"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if self.behaviour == "silent":
            await self.release.wait()
            return "421 4.4.2 closing"
        raw = envelope.original_content or b""
        self.mailbox.keep(describe(raw, list(envelope.rcpt_tos)))
        return "250 2.0.0 queued"


class SmtpServer:
    """An aiosmtpd server on ``port`` (0: a free one), in a thread of this process."""

    def __init__(
        self, host: str = "127.0.0.1", port: int = 0, behaviour: Behaviour = "accept",
        mailbox: Mailbox | None = None,
    ) -> None:  # fmt: skip
        self.mailbox = mailbox or Mailbox()
        self._handler = _Handler(self.mailbox, behaviour)
        self._controller = Controller(
            self._handler, hostname=host, port=port or _free_port(host), ready_timeout=10
        )

    @property
    def port(self) -> int:
        return int(self._controller.port)

    def start(self) -> SmtpServer:
        self._controller.start()
        return self

    def behave(self, behaviour: Behaviour) -> None:
        """Answer from now on as ``behaviour`` says (a silent wait in progress ends)."""
        handler, loop = self._handler, self._controller.loop
        loop.call_soon_threadsafe(handler.release.set)
        if behaviour == "silent":
            loop.call_soon_threadsafe(handler.release.clear)
        handler.behaviour = behaviour

    def stop(self) -> None:
        loop = self._controller.loop
        loop.call_soon_threadsafe(self._handler.release.set)
        self._controller.stop()


def _free_port(host: str) -> int:
    import socket

    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def page(mails: list[dict[str, Any]]) -> str:
    rows = "".join(
        "<article><dl>"
        + "".join(
            f"<dt>{html.escape(name)}</dt><dd>{html.escape(str(mail.get(key, '')))}</dd>"
            for name, key in (
                ("From", "from"),
                ("To", "to"),
                ("Reply-To", "reply_to"),
                ("Subject", "subject"),
                ("Message-ID", "message_id"),
            )
        )
        + f"</dl><pre>{html.escape(str(mail.get('body', '')))}</pre></article>"
        for mail in reversed(mails)
    )
    return (
        "<!doctype html><meta charset=utf-8><title>Local mail</title>"
        f"<h1>Mail sent by the local stack ({len(mails)})</h1>{rows or '<p>None yet.</p>'}"
    )


class _Viewer(BaseHTTPRequestHandler):
    server: _ViewerServer

    def do_GET(self) -> None:
        mails = self.server.mailbox.all()
        if self.path == "/healthz":
            self._answer(200, "text/plain", b"ok")
        elif self.path == "/messages":
            self._answer(200, "application/json", json.dumps({"messages": mails}).encode())
        elif self.path == "/":
            self._answer(200, "text/html; charset=utf-8", page(mails).encode())
        else:
            self._answer(404, "text/plain", b"not found")

    def do_POST(self) -> None:
        """``/behaviour`` with ``accept``, ``refuse`` or ``silent``: the e2e tests' relay
        faults (loopback only, like the whole stack)."""
        wanted = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode().strip()
        if self.path != "/behaviour" or wanted not in BEHAVIOURS:
            self._answer(404, "text/plain", b"not found")
            return
        self.server.smtp.behave(wanted)  # type: ignore[arg-type]
        self._answer(200, "text/plain", wanted.encode())

    def _answer(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the stack's logs hold the SMTP side


class _ViewerServer(ThreadingHTTPServer):
    def __init__(self, address: tuple[str, int], smtp: SmtpServer) -> None:
        super().__init__(address, _Viewer)
        self.smtp, self.mailbox = smtp, smtp.mailbox


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--smtp-port", type=int, required=True)
    parser.add_argument("--web-port", type=int, required=True)
    parser.add_argument("--state-dir", type=Path, required=True)
    args = parser.parse_args()
    args.state_dir.mkdir(parents=True, exist_ok=True)
    mailbox = Mailbox(args.state_dir / "mail.jsonl")
    server = SmtpServer(args.host, args.smtp_port, mailbox=mailbox).start()
    try:
        _ViewerServer((args.host, args.web_port), server).serve_forever()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
