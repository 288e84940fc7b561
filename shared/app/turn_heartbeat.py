"""A running turn's heartbeat: its lease (and its chat's) kept ahead, a stop heard.

Every ``turn_heartbeat_seconds`` a thread reads the chat's run record (one read): a turn
sent with the ``interrupt`` strategy has asked this one to stop (``signals.stop``), or the
chat is held by another turn because this one's lease ran out (``signals.lost``: it stops
and leaves the chat alone), or the turn's record is gone (an account erased meanwhile). When
a third of the lease is spent, the same call moves both leases on (one commit). A turn that
ends within a third of its lease writes nothing here. A crashed process stops beating, so
its lease runs out and the chat goes to the next turn.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import timedelta
from types import TracebackType

from shared.deps import Deps
from shared.errors import DependencyUnavailable
from shared.graph.context import RunSignals

log = logging.getLogger("turn")


class Heartbeat:
    def __init__(
        self,
        deps: Deps,
        user_id: str,
        client_message_id: str,
        chat_id: str,
        owner: str,
        signals: RunSignals,
    ) -> None:
        self._deps = deps
        self._ids = (user_id, client_message_id, chat_id, owner)
        self._signals = signals
        self._ended = threading.Event()
        self._thread = threading.Thread(target=self._run, name="turn-heartbeat", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._ended.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        settings = self._deps.settings
        lease = settings.turn_lease_seconds
        renewed = time.monotonic()
        while not self._ended.wait(settings.turn_heartbeat_seconds):
            due = time.monotonic() - renewed >= lease / 3
            until = self._deps.clock.now() + timedelta(seconds=lease) if due else None
            try:
                beat = self._deps.conversations.beat(*self._ids, lease_until=until)
            except DependencyUnavailable as error:  # try again on the next beat
                log.warning("turn heartbeat failed", extra={"error": error.message})
                continue
            if due:
                renewed = time.monotonic()
            if beat != "go":
                log.info("turn told to stop", extra={"beat": beat, "chat_id": self._ids[2]})
                if beat in ("lost", "gone"):
                    self._signals.lost.set()
                self._signals.stop.set()
