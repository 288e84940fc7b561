"""In-memory ``Outbox`` with the Firestore adapter's semantics; ``delivered`` lists what
actually went out (once per key), for tests. With a ``Mailer`` it delivers like the Firestore
adapter: recorded ``pending``, handed over once by the caller that recorded it, settled."""

from __future__ import annotations

import threading
from datetime import datetime

from shared.adapters.agent_data_rules import outbox_doc_id, outbox_record, settled
from shared.adapters.clock import SystemClock
from shared.adapters.doc_ids import doc_id
from shared.models.agent_data import OutboundEmail, SentMessage
from shared.ports import Clock, Mailer


class FakeOutbox:
    def __init__(self, clock: Clock | None = None, mailer: Mailer | None = None) -> None:
        self._clock = clock or SystemClock()
        self._mailer = mailer
        self._sent: dict[tuple[str, str], SentMessage] = {}
        self._lock = threading.Lock()
        self.delivered: list[tuple[str, SentMessage]] = []  # (user id, record)

    def send(self, user_id: str, message: OutboundEmail, idempotency_key: str) -> SentMessage:
        key = (doc_id(user_id), outbox_doc_id(idempotency_key))
        mailer = self._mailer
        with self._lock:
            earlier = self._sent.get(key)
            if earlier is not None:
                return earlier
            record = outbox_record(idempotency_key, message, self._clock.now(), mailer, "memory")
            self._sent[key] = record
            if mailer is None:
                self.delivered.append((user_id, record))
                return record
        answer = mailer.deliver(message, record.message_id)
        done = settled(record, answer, self._clock.now())
        with self._lock:
            self._sent[key] = done
            self.delivered.append((user_id, done))
        return done

    def get_sent(self, user_id: str, idempotency_key: str) -> SentMessage | None:
        with self._lock:
            return self._sent.get((doc_id(user_id), outbox_doc_id(idempotency_key)))

    def fenced(self, since: datetime) -> FakeOutbox:
        """The fakes know no erasure mark: every write goes through."""
        return self
