"""``TrustStore`` on Firestore (the sync client, injected).

Layout: one document per user, under the user so account deletion and export find it::

    users/{uid}/settings/trust    level, pinned_mode, tasks_completed, tasks_failed,
                                  serious_incidents, first_task_at, last_incident_at,
                                  level_since, updated_at

``get`` reads one document (a missing one is the defaults; fields this version does not know
are ignored, and kept by writes, so an older instance never erases a newer one's fields).

``update`` and ``put_settings`` are a compare-and-set: read the document, then write it
only if it is unchanged since (``create`` when it did not exist, else ``update`` with the
read's update time as precondition); when another writer came first, read again and
re-apply the change, after a short random pause. Two outcomes recorded at once therefore
both count. This gives a transaction's guarantee for one document without holding locks:
with Firestore's pessimistic transactions, three concurrent writers waited about 2 s each
on the emulator and sometimes hit its lock timeout. A record that keeps changing after
``MAX_ATTEMPTS`` reads raises ``DependencyUnavailable`` (nothing written; retry).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import firestore
from google.cloud.firestore_v1.base_document import DocumentSnapshot
from google.cloud.firestore_v1.document import DocumentReference

from shared.adapters.doc_ids import doc_id
from shared.adapters.firestore_erasure import fenced
from shared.adapters.gcp_errors import transient_as_unavailable
from shared.errors import DependencyUnavailable
from shared.models.trust import HitlMode, TrustRecord

SETTINGS_COLLECTION = "settings"
TRUST_DOCUMENT = "trust"
MAX_ATTEMPTS = 10
BACKOFF_SECONDS = 0.02  # the first pause's upper bound; doubles per attempt, up to MAX_PAUSE
MAX_PAUSE_SECONDS = 0.5
LOST_RACE = (gexc.FailedPrecondition, gexc.AlreadyExists, gexc.NotFound)  # NotFound: erased


class FirestoreTrustStore:
    def __init__(self, client: firestore.Client, since: datetime | None = None) -> None:
        self._client = client
        self._since = since  # set: writes of work created then, fenced by the erasure mark

    def fenced(self, since: datetime) -> FirestoreTrustStore:
        return FirestoreTrustStore(self._client, since)

    def _ref(self, user_id: str) -> DocumentReference:
        user = self._client.collection("users").document(doc_id(user_id))
        ref: DocumentReference = user.collection(SETTINGS_COLLECTION).document(TRUST_DOCUMENT)
        return ref

    def get(self, user_id: str) -> TrustRecord:
        ref = self._ref(user_id)
        with transient_as_unavailable("firestore"):
            snap = ref.get()
        return _record(snap.to_dict())

    def update(
        self, user_id: str, change: Callable[[TrustRecord], TrustRecord], now: datetime
    ) -> TrustRecord:
        ref = self._ref(user_id)
        for attempt in range(MAX_ATTEMPTS):
            with transient_as_unavailable("firestore"):
                snap = ref.get()
                stored = change(_record(snap.to_dict())).model_copy(update={"updated_at": now})
                if self._write_if_unchanged(user_id, ref, snap, stored.model_dump()):
                    return stored
            time.sleep(random.uniform(0, min(BACKOFF_SECONDS * 2**attempt, MAX_PAUSE_SECONDS)))
        raise DependencyUnavailable("firestore: the trust record kept changing; retry")

    def put_settings(
        self, user_id: str, pinned_mode: HitlMode | None, now: datetime
    ) -> TrustRecord:
        return self.update(
            user_id, lambda record: record.model_copy(update={"pinned_mode": pinned_mode}), now
        )

    def _write_if_unchanged(
        self,
        user_id: str,
        ref: DocumentReference,
        snap: DocumentSnapshot[Any],
        data: dict[str, Any],
    ) -> bool:
        unchanged = self._client.write_option(last_update_time=snap.update_time)

        def write(batch: Any) -> None:
            if snap.exists:
                batch.update(ref, data, option=unchanged)
            else:
                batch.create(ref, data)

        try:
            if self._since is None:
                batch = self._client.batch()
                write(batch)
                batch.commit()
            else:
                fenced(self._client, user_id, self._since, write)
        except LOST_RACE:
            return False
        return True


def _record(data: dict[str, Any] | None) -> TrustRecord:
    """The stored fields this version knows; None (no document): the defaults."""
    data = data or {}
    return TrustRecord.model_validate({k: data[k] for k in TrustRecord.model_fields if k in data})
