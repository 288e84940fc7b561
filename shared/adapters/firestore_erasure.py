"""The account erasure's mark in Firestore, which work of the user checks before it writes.

``erasures/{sha256("erased-user:" + uid)}`` (outside ``users/{uid}``, which the erasure
deletes; only a hash of the uid, like PostgreSQL's ``erased_users``): ``erasing_since``
while an erasure runs, ``erased_at`` once it finished. Work that writes under the user reads
the mark in the transaction of its write, so it is ordered with the erasure: its write
either commits before the mark (the erasure then deletes it) or sees the mark and is refused.

- A turn's claim is refused while an erasure runs: a message arriving then starts nothing.
- An agent job's writes (its document, the agents' records, sent mail, the trust record)
  are refused while an erasure runs and, after it, for work created before it finished
  (``since`` <= ``erased_at``): a job running across an erasure stops writing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from google.cloud import firestore
from google.cloud.firestore_v1.document import DocumentReference

from shared.adapters.firestore_chat_codec import plain
from shared.adapters.firestore_tx import run_transaction
from shared.adapters.gcp_errors import firestore_errors
from shared.errors import AccountErased

T = TypeVar("T")
ERASURES = "erasures"


def erasure_ref(client: firestore.Client, user_id: str) -> DocumentReference:
    digest = hashlib.sha256(f"erased-user:{user_id}".encode()).hexdigest()
    ref: DocumentReference = client.collection(ERASURES).document(digest)
    return ref


def blocks(data: dict[str, Any] | None, since: datetime | None) -> bool:
    """Whether the mark refuses a write of work created at ``since`` (None: new work)."""
    if not data:
        return False
    if data.get("erasing_since") is not None:
        return True
    erased_at = plain(data.get("erased_at"))
    return since is not None and erased_at is not None and since <= erased_at


def mark(client: firestore.Client, user_id: str, now: datetime, running: bool) -> None:
    """``running``: the erasure starts (new work is refused); else it finished at ``now``."""
    fields = {"erasing_since": now} if running else {"erasing_since": None, "erased_at": now}
    with firestore_errors():
        erasure_ref(client, user_id).set(fields, merge=True)


def fenced(
    client: firestore.Client,
    user_id: str,
    since: datetime | None,
    write: Callable[[firestore.Transaction], T],
) -> T:
    """Run ``write`` in a transaction that first reads the user's mark; ``AccountErased``
    (nothing written) when the mark refuses work created at ``since``."""
    ref = erasure_ref(client, user_id)

    @firestore.transactional
    def run(transaction: firestore.Transaction) -> T:
        snap = ref.get(transaction=transaction)
        if blocks(snap.to_dict() if snap.exists else None, since):
            raise AccountErased("the account was erased")
        return write(transaction)

    with firestore_errors():
        result: T = run_transaction(client, run)
    return result
