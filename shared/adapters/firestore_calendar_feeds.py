"""``CalendarFeedStore`` on Firestore.

Layout::

    users/{uid}/settings/calendarFeed    token, digest, created_at   (the user's grant)
    calendarFeeds/{digest}               user_id, created_at         (the URL's lookup)

Both change in one transaction. A lookup is believed only while the user's grant still has
its digest, so a lookup left behind (an account erased with its ``users/{uid}`` tree, a
write that raced) finds nobody: the URL answers 404.
"""

from __future__ import annotations

from google.cloud import firestore
from google.cloud.firestore_v1.document import DocumentReference

from shared.adapters.doc_ids import doc_id
from shared.adapters.firestore_tx import run_transaction
from shared.adapters.gcp_errors import transient_as_unavailable
from shared.models.calendar_feed import FeedGrant

LOOKUP = "calendarFeeds"
GRANT_DOCUMENT = "calendarFeed"


class FirestoreCalendarFeedStore:
    def __init__(self, client: firestore.Client) -> None:
        self._client = client

    def _grant_ref(self, user_id: str) -> DocumentReference:
        user = self._client.collection("users").document(doc_id(user_id))
        ref: DocumentReference = user.collection("settings").document(GRANT_DOCUMENT)
        return ref

    def _lookup_ref(self, digest: str) -> DocumentReference:
        ref: DocumentReference = self._client.collection(LOOKUP).document(digest)
        return ref

    def get_feed(self, user_id: str) -> FeedGrant | None:
        with transient_as_unavailable("firestore"):
            snap = self._grant_ref(user_id).get()
        return FeedGrant.model_validate(snap.to_dict()) if snap.exists else None

    def put_feed(self, user_id: str, grant: FeedGrant) -> FeedGrant:
        return self._write(user_id, grant, keep_existing=True) or grant

    def replace_feed(self, user_id: str, grant: FeedGrant) -> FeedGrant:
        return self._write(user_id, grant, keep_existing=False) or grant

    def delete_feed(self, user_id: str) -> None:
        self._write(user_id, None, keep_existing=False)

    def _write(
        self, user_id: str, grant: FeedGrant | None, keep_existing: bool
    ) -> FeedGrant | None:
        grant_ref = self._grant_ref(user_id)

        @firestore.transactional
        def work(tx: firestore.Transaction) -> FeedGrant | None:
            snap = grant_ref.get(transaction=tx)
            current = FeedGrant.model_validate(snap.to_dict()) if snap.exists else None
            if current is not None and keep_existing:
                return current
            if current is not None:
                tx.delete(self._lookup_ref(current.digest))
            if grant is None:
                tx.delete(grant_ref)
                return None
            tx.set(grant_ref, grant.model_dump())
            lookup = {"user_id": user_id, "created_at": grant.created_at}
            tx.set(self._lookup_ref(grant.digest), lookup)
            return grant

        with transient_as_unavailable("firestore"):
            written: FeedGrant | None = run_transaction(self._client, work)
        return written

    def feed_owner(self, digest: str) -> str | None:
        with transient_as_unavailable("firestore"):
            snap = self._lookup_ref(digest).get()
            if not snap.exists:
                return None
            user_id = str((snap.to_dict() or {}).get("user_id", ""))
            grant = self.get_feed(user_id) if user_id else None
        return user_id if grant is not None and grant.digest == digest else None
