"""``ProfileStore`` on Firestore (the sync client, injected).

Layout: one document per user, under the user so account deletion and export find it::

    users/{uid}/settings/assistant    persona_name, tone, language, timezone,
                                      presentation_rules, privacy_mode, updated_at

Reads and writes are one RPC each; ``put_profile`` replaces the whole document, so a
repeated put stores the same thing. Fields this version does not know are ignored on read.
"""

from __future__ import annotations

from datetime import datetime

from google.cloud import firestore
from google.cloud.firestore_v1.document import DocumentReference

from shared.adapters.doc_ids import doc_id
from shared.adapters.firestore_chat_codec import plain
from shared.adapters.gcp_errors import transient_as_unavailable
from shared.models.domain import AssistantProfile

SETTINGS_COLLECTION = "settings"
PROFILE_DOCUMENT = "assistant"


class FirestoreProfileStore:
    def __init__(self, client: firestore.Client) -> None:
        self._client = client

    def _ref(self, user_id: str) -> DocumentReference:
        user = self._client.collection("users").document(doc_id(user_id))
        ref: DocumentReference = user.collection(SETTINGS_COLLECTION).document(PROFILE_DOCUMENT)
        return ref

    def get_profile(self, user_id: str) -> AssistantProfile:
        ref = self._ref(user_id)
        with transient_as_unavailable("firestore"):
            snap = ref.get()
        data = snap.to_dict() or {}  # None for a missing document: the defaults
        known = {name: data[name] for name in AssistantProfile.model_fields if name in data}
        return AssistantProfile.model_validate(plain(known))

    def put_profile(self, user_id: str, profile: AssistantProfile, now: datetime) -> None:
        data = profile.model_copy(update={"updated_at": now}).model_dump()
        ref = self._ref(user_id)
        with transient_as_unavailable("firestore"):
            ref.set(data)
