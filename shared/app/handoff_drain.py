"""Draining the turns' outboxes: handoffs a queue could not take when their turn ended.

Two ways in, both safe to repeat or to run at once (each handoff is idempotent by name):
the chat's next turn drains the turns its chat lists (``Chat.outbox``, read with the claim)
before it runs; the scheduled drain (Cloud Scheduler -> ``resume``'s ``/outbox/drain``)
takes pending turns of every user. A handoff whose queue is still down stays for next time;
work of an erased account is dropped by the function it reaches (its erasure time).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from urllib.parse import urljoin

from shared.config import Settings
from shared.deps import Deps
from shared.errors import DependencyUnavailable
from shared.ports import OutboxEntry
from shared.services import handoff

log = logging.getLogger("handoff")
DRAIN_BATCH = 100  # turns per scheduled run; the next run takes the rest


@dataclass(frozen=True)
class DrainReport:
    turns: int
    sent: int
    left: int

    def as_body(self) -> dict[str, int]:
        return {"turns": self.turns, "sent": self.sent, "left": self.left}


def drain_url(settings: Settings) -> str:
    return urljoin(settings.resume_url, "outbox/drain")


def drain_turn(deps: Deps, entry: OutboxEntry) -> tuple[int, int]:
    """(sent, left) for one turn's outbox."""
    conversations = deps.conversations
    pending = conversations.outbox(entry.user_id, entry.client_message_id)
    remaining = handoff.send(deps.tasks, deps.publisher, pending)
    conversations.settle_outbox(entry.user_id, entry.chat_id, entry.client_message_id, remaining)
    return len(pending) - len(remaining), len(remaining)


def drain_chat(deps: Deps, user_id: str, chat_id: str, turns: list[str]) -> None:
    """Before a chat's next turn runs: best effort, a failure leaves it for later."""
    for client_message_id in turns:
        try:
            drain_turn(deps, OutboxEntry(user_id, chat_id, client_message_id))
        except DependencyUnavailable as error:
            log.warning("outbox not drained", extra={"chat_id": chat_id, "error": error.message})
            return


def drain_due(deps: Deps, limit: int = DRAIN_BATCH) -> DrainReport:
    """One turn that cannot be drained (a queue that refuses its handoff for good) is
    logged and left; it never blocks the others."""
    sent = left = 0
    entries = deps.conversations.turns_with_outbox(limit)
    for entry in entries:
        try:
            done, kept = drain_turn(deps, entry)
        except Exception:  # one poisoned outbox must not stop the drain of everyone else
            log.exception("outbox not drained", extra={"turn": entry.client_message_id})
            done, kept = 0, 1
        sent, left = sent + done, left + kept
    report = DrainReport(len(entries), sent, left)
    log.info("outbox drained", extra=report.as_body())
    return report
