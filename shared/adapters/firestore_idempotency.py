"""``IdempotencyStore`` on Firestore: one ``create()`` per key, which fails if it exists.

Documents are ``idempotency/{sha256(key)}`` (hashing keeps any key a valid, fixed-length id)
with ``expire_at`` for a TTL policy. TTL deletion lags expiry by up to a day, so a key is
guaranteed to be refused for at least ``ttl_seconds``, not forgotten right after.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from google.api_core import exceptions as gexc
from google.cloud import firestore
from google.cloud.firestore_v1.document import DocumentReference

from shared.adapters.gcp_errors import transient_as_unavailable


class FirestoreIdempotencyStore:
    def __init__(self, client: firestore.Client, collection: str = "idempotency") -> None:
        self._client = client
        self._collection = collection

    def _ref(self, key: str) -> DocumentReference:
        digest = hashlib.sha256(key.encode()).hexdigest()
        ref: DocumentReference = self._client.collection(self._collection).document(digest)
        return ref

    def claim(self, key: str, now: datetime, ttl_seconds: int) -> bool:
        ref = self._ref(key)
        with transient_as_unavailable("firestore"):
            try:
                ref.create({"created_at": now, "expire_at": now + timedelta(seconds=ttl_seconds)})
            except gexc.AlreadyExists:
                return False
        return True

    def release(self, key: str) -> None:
        with transient_as_unavailable("firestore"):
            self._ref(key).delete()
