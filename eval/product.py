"""The product as the evaluation drives it: the served functions over HTTP, their clock, and
the stores read back for scoring (turn records in Firestore, facts and task keys in
PostgreSQL), with the local stack's settings.

The functions read ``CLOCK_OFFSET_FILE`` (dev and test only): the seconds added to the
system clock. Writing it before a session makes every function, extraction included, live
at that session's date, so "yesterday" is anchored as the dataset meant it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
from google.cloud import firestore

from scripts.stacklib.tokens import mint_user_token
from shared.adapters.clock import OffsetFileClock
from shared.adapters.firestore_conversations import FirestoreConversationStore
from shared.adapters.keyring_local import LocalKek
from shared.adapters.postgres import Database
from shared.adapters.postgres_facts import PostgresFactStore
from shared.adapters.postgres_keyring import PostgresKeyRing
from shared.config import Settings
from shared.models.domain import TurnRecord
from shared.models.memory import Fact
from shared.services.ids import extraction_task_name

RETRIES = 5


class TurnFailed(RuntimeError):
    pass


@dataclass(frozen=True)
class TurnResult:
    chat_id: str
    turn_id: str
    reply: str
    ms: float


class Product:
    def __init__(self, settings: Settings, state_dir: Path, turn_url: str) -> None:
        if not settings.clock_offset_file or not settings.local_kek_file:
            raise SystemExit("the stack's env lacks CLOCK_OFFSET_FILE or LOCAL_KEK_FILE")
        self._state = state_dir
        self._turn_url = turn_url
        self._http = httpx.Client(timeout=600)
        self._conversations = FirestoreConversationStore(
            firestore.Client(project=settings.gcp_project)
        )
        self._db = Database(settings)
        keys = PostgresKeyRing(self._db, LocalKek(settings.local_kek_file))
        self._facts = PostgresFactStore(self._db, keys)
        self._clock = OffsetFileClock(settings.clock_offset_file)

    def close(self) -> None:
        self._clock.set_offset(0)
        self._http.close()
        self._db.close()

    def live_at(self, when: datetime) -> None:
        """Every function's clock reads ``when`` from now on (and moves on from there)."""
        self._clock.set_offset((when - datetime.now(UTC)).total_seconds())

    def turn(self, user: str, chat_id: str | None, text: str, client_id: str) -> TurnResult:
        """One message as the app sends it; a rate limit or an outage is waited out and
        the same ``client_id`` sent again (the turn is idempotent by it)."""
        body = {"message": text[:8000], "client_message_id": client_id,
                **({"chat_id": chat_id} if chat_id else {})}  # fmt: skip
        for attempt in range(RETRIES):
            headers = {"Authorization": f"Bearer {mint_user_token(self._state, user)}"}
            started = time.perf_counter()
            response = self._http.post(self._turn_url, json=body, headers=headers)
            ms = (time.perf_counter() - started) * 1000
            if response.status_code == 200:
                data = response.json()
                return TurnResult(data["chat_id"], data["turn_id"], data["reply"]["text"], ms)
            if response.status_code == 429:
                time.sleep(61 - time.time() % 60)
            elif response.status_code in (409, 503):
                time.sleep(2.0 * (attempt + 1))
            else:
                raise TurnFailed(f"turn answered {response.status_code}: {response.text[:300]}")
        raise TurnFailed(f"turn {client_id} did not succeed after {RETRIES} attempts")

    def record(self, user: str, client_id: str) -> TurnRecord | None:
        return self._conversations.get_turn(user, client_id)

    def wait_for_extraction(self, user: str, turn_ids: Iterable[str], seconds: float) -> int:
        """Wait until the extraction tasks of these turns are applied; how many were not
        (still queued when the time ran out)."""
        waiting = {extraction_task_name(turn_id) for turn_id in turn_ids}
        deadline = time.monotonic() + seconds
        while waiting and time.monotonic() < deadline:
            waiting = {key for key in waiting if not self._facts.task_status(user, key).done}
            if waiting:
                time.sleep(0.5)
        return len(waiting)

    def facts(self, user: str, fact_ids: list[str]) -> list[Fact]:
        return self._facts.facts_by_id(user, fact_ids)
