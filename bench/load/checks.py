"""After a load run: what the users' stores hold, counted for duplicates (each must be 0).

- messages: two user messages of one turn, or more user messages in a chat than turns the
  chat completed (a message answered twice);
- facts: the same fact text stored twice for a user (every statement of the workload is
  unique);
- actions: an agent job's result posted twice, or more results than jobs that finished.
"""

from __future__ import annotations

from collections import Counter

from google.cloud import firestore

from shared.adapters.keyring_local import LocalKek
from shared.adapters.postgres import Database
from shared.adapters.postgres_facts import PostgresFactStore
from shared.adapters.postgres_keyring import PostgresKeyRing
from shared.config import Settings
from shared.models.memory import FactFilter


def duplicates(chats: dict[str, str]) -> dict[str, int]:
    settings = Settings()
    db = firestore.Client(project=settings.gcp_project)
    database = Database(settings)
    facts = PostgresFactStore(
        database, PostgresKeyRing(database, LocalKek(settings.local_kek_file or ""))
    )
    found = Counter({"messages": 0, "facts": 0, "actions": 0})
    try:
        for user, chat in chats.items():
            found["messages"] += _messages(db, user, chat)
            found["actions"] += _actions(db, user, chat)
            texts = Counter(f.text for f in facts.list_facts(user, FactFilter(limit=1000)))
            found["facts"] += sum(n - 1 for n in texts.values() if n > 1)
    finally:
        database.close()
    return dict(found)


def _messages(db: firestore.Client, user: str, chat: str) -> int:
    said = [
        s.to_dict() or {} for s in db.collection(f"users/{user}/chats/{chat}/messages").stream()
    ]
    per_turn = Counter(m.get("turn_id") for m in said if m.get("role") == "user")
    twice = sum(n - 1 for n in per_turn.values() if n > 1)
    turns = db.collection(f"users/{user}/turns").stream()
    done = sum(1 for t in turns if (t.to_dict() or {}).get("status") == "done"
               and (t.to_dict() or {}).get("chat_id") == chat)  # fmt: skip
    return twice + max(0, sum(per_turn.values()) - done)


def _actions(db: firestore.Client, user: str, chat: str) -> int:
    results = [s.id for s in db.collection(f"users/{user}/chats/{chat}/messages").stream()
               if s.id.endswith("-result")]  # fmt: skip
    jobs = [s.to_dict() or {} for s in db.collection(f"users/{user}/jobs").stream()]
    finished = sum(1 for job in jobs if job.get("status") in ("done", "aborted", "cancelled"))
    return max(0, len(results) - finished) + (len(results) - len(set(results)))
