"""Everything the product holds about the user: export it, or erase it.

Export: persons, facts with their history, pending items and the execution memory (how
earlier agent jobs were planned and went; PostgreSQL, decrypted by the stores: it is the
user's own data), chats, messages, turns, settings, and the agents'
records (reminders, events, notes, budgets, expenses, feedback, the outbox of sent
messages), the notification inbox, the push devices and the notification settings as
``conversations.documents`` (Firestore, all under ``users/{uid}``).
Redis holds only short-lived counters and caches, which are not exported.

Erasure first marks the account as being erased (Firestore: new turns are refused, agent
jobs stop writing), waits for the turns that still run (their leases), then erases
PostgreSQL (facts, persons, pending items, processed keys, the data key, then executions
and strategy feedback; it waits for an extraction that holds the user, and work queued
before then stores nothing), then Firestore
(``users/{uid}`` and everything below it, the agents' records and outbox, the inbox and the
push devices included; a reminder's task still queued then finds nothing to ring, and
ringing and device registration read the erasure mark, so neither writes into an account
being erased), then
Redis (the user's keys), and marks the erasure finished. Each step is idempotent, so a
failure answers 503 and a retry finishes the job. Once it answered 200, no turn, extraction
or agent job that overlapped it can write anything of the user again.
"""

from __future__ import annotations

import time

from shared.app.settings.needs import SettingsPorts
from shared.errors import DependencyUnavailable
from shared.models.history_api import ExecutionView
from shared.models.memory import Fact, FactFilter, FactPosition
from shared.models.memory_api import DeletedResponse, ExportResponse, FactView, PersonView
from shared.services.memory.pending import PendingItems

EXPORT_PAGE = 1000  # FactFilter's largest page
TURN_WAIT_SECONDS = 40.0  # a turn's lease (30 s) runs out by then, even if it crashed
EXPORT_EXECUTIONS = 1000  # the execution memory's largest page (they expire long before)


class AccountAdmin:
    def __init__(self, deps: SettingsPorts) -> None:
        self._deps = deps

    def export(self, user_id: str) -> ExportResponse:
        exported_at = self._deps.clock.now()
        persons = self._deps.contacts.list_persons(user_id)
        facts = self._all_facts(user_id)
        pending = self._deps.pending.list_pending(user_id)
        return ExportResponse(
            user_id=user_id,
            exported_at=exported_at,
            persons=[PersonView.of(person) for person in persons],
            facts=[FactView.of(fact) for fact in facts],
            facts_truncated=False,  # paged through: every fact is there
            pending=PendingItems(self._deps).views(user_id, pending),
            conversations=self._deps.account_conversations.export_user(user_id),
            executions=[
                ExecutionView.of(run)
                for run in self._deps.executions.list_executions(
                    user_id, exported_at, EXPORT_EXECUTIONS
                )
            ],
        )

    def delete(self, user_id: str) -> DeletedResponse:
        deps = self._deps
        archive = deps.account_conversations
        archive.begin_erasure(user_id, deps.clock.now())
        deps.calendar_feeds.delete_feed(user_id)  # its URL stops now, its lookup goes too
        self._wait_for_turns(user_id)
        deps.facts.delete_user(user_id, deps.clock.now())  # after the turns: their queued work
        deps.executions.forget_all(user_id)  # after the tombstone: no late record comes back
        archive.delete_user(user_id)
        deps.account_cache.delete_user(user_id)
        archive.end_erasure(user_id, deps.clock.now())
        return DeletedResponse()

    def _wait_for_turns(self, user_id: str) -> None:
        """Turns claimed before the mark finish (or their leases run out); none can start."""
        deadline = time.monotonic() + TURN_WAIT_SECONDS
        while self._deps.account_conversations.running_turns(user_id, self._deps.clock.now()):
            if time.monotonic() >= deadline:
                raise DependencyUnavailable("a turn of the account still runs; retry")
            time.sleep(0.1)

    def _all_facts(self, user_id: str) -> list[Fact]:
        """Every fact with its history, oldest first, a keyset page at a time."""
        facts: list[Fact] = []
        where = FactFilter(include_history=True, limit=EXPORT_PAGE)
        while page := self._deps.facts.list_facts(user_id, where):
            facts += page
            last = FactPosition(created_at=page[-1].created_at, id=page[-1].id)
            where = where.model_copy(update={"after": last})
        return facts
