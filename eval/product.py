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
from google.api_core.exceptions import NotFound
from google.cloud import firestore

from scripts.stacklib.tokens import mint_user_token
from shared.adapters.clock import OffsetFileClock
from shared.adapters.cloud_tasks import build_tasks_client
from shared.adapters.firestore_conversations import FirestoreConversationStore
from shared.adapters.keyring_local import LocalKek
from shared.adapters.postgres import Database
from shared.adapters.postgres_facts import PostgresFactStore
from shared.adapters.postgres_keyring import PostgresKeyRing
from shared.config import Settings
from shared.models.domain import TurnRecord
from shared.models.memory import Fact
from shared.services.agent_jobs.reports import RESULT_SUFFIX
from shared.services.ids import extraction_task_name

RETRIES = 8
BUSY = (409, 429, 503)  # waited out: a chat still busy, a rate limit, a dependency outage
MAX_WAIT_SECONDS = 60.0


class TurnFailed(RuntimeError):
    pass


def retry_delay(response: httpx.Response, attempt: int) -> float:
    """How long to wait before sending again: the answer's ``Retry-After`` (seconds) when
    it has one, else an exponential backoff from 1 s; at most a minute either way."""
    header = response.headers.get("Retry-After", "")
    seconds = float(header) if header.strip().isdigit() else 2.0**attempt
    return min(max(seconds, 0.5), MAX_WAIT_SECONDS)


@dataclass(frozen=True)
class Drained:
    """The extraction tasks of a session once the queue let go of them."""

    applied: int  # stored by the extraction (its task key is processed)
    unapplied: int  # delivered but nothing stored: the extraction failed for good
    queued: int  # still in the queue when the time ran out


@dataclass(frozen=True)
class TurnResult:
    chat_id: str
    turn_id: str
    reply: str
    ms: float


class Product:
    def __init__(self, settings: Settings, state_dir: Path, origin: str) -> None:
        if not settings.clock_offset_file or not settings.local_kek_file:
            raise SystemExit("the stack's env lacks CLOCK_OFFSET_FILE or LOCAL_KEK_FILE")
        self._state = state_dir
        self._http = httpx.Client(base_url=origin, timeout=600)  # the one origin: /v1
        self._conversations = FirestoreConversationStore(
            firestore.Client(project=settings.gcp_project)
        )
        self._db = Database(settings)
        keys = PostgresKeyRing(self._db, LocalKek(settings.local_kek_file))
        self._facts = PostgresFactStore(self._db, keys)
        self._clock = OffsetFileClock(settings.clock_offset_file)
        self._tasks = build_tasks_client(settings)
        self._queue = self._tasks.queue_path(
            settings.gcp_project, settings.tasks_location, settings.extraction_queue
        )

    def close(self) -> None:
        self._clock.set_offset(0)
        self._http.close()
        self._db.close()

    def live_at(self, when: datetime) -> None:
        """Every function's clock reads ``when`` from now on (and moves on from there)."""
        self._clock.set_offset((when - datetime.now(UTC)).total_seconds())

    def turn(self, user: str, chat_id: str | None, text: str, client_id: str) -> TurnResult:
        """One message as the app sends it; a rate limit, a busy chat or an outage is
        waited out (``retry_delay``) and the same ``client_id`` sent again (the turn is
        idempotent by it): never counted as a failure unless it lasts."""
        body = {"message": text[:8000], "client_message_id": client_id}
        chat_id = chat_id or self._new_chat(user, client_id)
        for attempt in range(RETRIES):
            headers = {"Authorization": f"Bearer {mint_user_token(self._state, user)}"}
            started = time.perf_counter()
            path = f"/v1/chats/{chat_id}/messages"
            response = self._http.post(path, json=body, headers=headers)
            ms = (time.perf_counter() - started) * 1000
            if response.status_code == 200:
                data = response.json()
                return TurnResult(data["chat_id"], data["turn_id"], data["reply"]["text"], ms)
            if response.status_code not in BUSY:
                raise TurnFailed(f"turn answered {response.status_code}: {response.text[:300]}")
            time.sleep(retry_delay(response, attempt))
        raise TurnFailed(f"turn {client_id} did not succeed after {RETRIES} attempts")

    def record(self, user: str, client_id: str) -> TurnRecord | None:
        return self._conversations.get_turn(user, client_id)

    def wait_for_extraction(self, user: str, turn_ids: Iterable[str], seconds: float) -> Drained:
        """Wait until the queue has let go of these turns' extraction tasks: applied (the
        task key is processed), or delivered and gone without storing anything (the
        extraction failed for good: answered 200, never retried)."""
        pending = {extraction_task_name(turn_id) for turn_id in turn_ids}
        applied: set[str] = set()
        gone: set[str] = set()
        deadline = time.monotonic() + seconds
        while pending and time.monotonic() < deadline:
            for key in pending:
                if self._facts.task_status(user, key).done:
                    applied.add(key)
                elif not self._queued(key):
                    gone.add(key)
            pending -= applied | gone
            if pending:
                time.sleep(0.5)
        # Applied between the two looks: stored, then let go of.
        applied |= {key for key in gone if self._facts.task_status(user, key).done}
        return Drained(len(applied), len(gone - applied), len(pending))

    def _queued(self, task_name: str) -> bool:
        try:
            self._tasks.get_task(name=f"{self._queue}/tasks/{task_name}")
        except NotFound:
            return False
        return True

    def _new_chat(self, user: str, request_id: str) -> str:
        """The chat a first message goes to (made once per request id, as the app does)."""
        headers = {"Authorization": f"Bearer {mint_user_token(self._state, user)}"}
        params = {"request_id": request_id}
        response = self._http.post("/v1/chats", json={}, params=params, headers=headers)
        if response.status_code != 200:
            raise TurnFailed(f"create chat answered {response.status_code}: {response.text[:300]}")
        return str(response.json()["id"])

    def agent_result(self, user: str, chat_id: str, turn_id: str, seconds: float) -> str | None:
        """The final message of the agent job a turn handed its work to (a research
        question is answered in the chat when its job ends), or None if none came in time."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for message in self._conversations.recent_messages(user, chat_id, limit=20):
                if message.turn_id == turn_id and message.id.endswith(RESULT_SUFFIX):
                    return message.text
            time.sleep(1.0)
        return None

    def facts(self, user: str, fact_ids: list[str]) -> list[Fact]:
        return self._facts.facts_by_id(user, fact_ids)
