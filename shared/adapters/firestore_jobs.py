"""``JobStore`` on Firestore (the sync client, injected).

Layout: ``users/{uid}/jobs/{job_id}`` holds ``state`` (the ``JobState`` as JSON-typed
values), ``status`` and ``updated_at`` for queries by hand, and ``expire_at`` for a TTL
policy (finished jobs are kept ``ttl`` after their last write). Everything under the user, so
erasing the account (``users/{uid}`` recursively) erases its jobs.

RPCs: ``get`` reads one document; ``list_jobs`` runs one query (``updated_at`` descending,
then the document id: the automatic single-field index serves it); ``update`` is one
transaction (BeginTransaction, one read of the job and of the account's erasure mark,
Commit), retried with jittered backoff on contention (parallel subtasks save the same
job). A write of a job created before an erasure of its account (or during one) is
refused with ``AccountErased``: such a job is never claimed again and stops at its next
save (``firestore_erasure``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

from google.cloud import firestore
from google.cloud.firestore_v1.document import DocumentReference

from shared.adapters.doc_ids import doc_id
from shared.adapters.firestore_erasure import blocks, erasure_ref
from shared.adapters.firestore_keyset import keyset_query
from shared.adapters.firestore_tx import run_transaction
from shared.adapters.gcp_errors import firestore_errors, transient_as_unavailable
from shared.errors import AccountErased
from shared.models.jobs import JobState
from shared.ports import Keyset

R = TypeVar("R")
DEFAULT_JOB_TTL = timedelta(days=30)


class FirestoreJobStore:
    def __init__(self, client: firestore.Client, ttl: timedelta = DEFAULT_JOB_TTL) -> None:
        self._client = client
        self._ttl = ttl

    def _ref(self, user_id: str, job_id: str) -> DocumentReference:
        user = self._client.collection("users").document(doc_id(user_id))
        ref: DocumentReference = user.collection("jobs").document(doc_id(job_id))
        return ref

    def get(self, user_id: str, job_id: str) -> JobState | None:
        with transient_as_unavailable("firestore"):
            snap = self._ref(user_id, job_id).get()
        return _state_from(snap.to_dict()) if snap.exists else None

    def list_jobs(self, user_id: str, limit: int, after: Keyset | None = None) -> list[JobState]:
        if limit <= 0:
            return []
        jobs = self._client.collection("users").document(doc_id(user_id)).collection("jobs")
        query = keyset_query(jobs, "updated_at", limit, after, descending=True)
        with transient_as_unavailable("firestore"):
            return [_state_from(snap.to_dict()) for snap in query.stream()]

    def update(
        self,
        user_id: str,
        job_id: str,
        change: Callable[[JobState | None], tuple[R, JobState | None]],
    ) -> R:
        ref, erasure = self._ref(user_id, job_id), erasure_ref(self._client, user_id)

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> R:
            found = self._client.get_all([ref, erasure], transaction=transaction)
            snaps = {snap.reference.path: snap for snap in found}
            snap = snaps[ref.path]
            result, new = change(_state_from(snap.to_dict()) if snap.exists else None)
            if new is not None:
                if blocks(snaps[erasure.path].to_dict(), new.job.created_at):
                    raise AccountErased(f"job {job_id}: the account was erased")
                transaction.set(ref, self._data(new))
            return result

        with firestore_errors():
            outcome: R = run_transaction(self._client, run)
        return outcome

    def _data(self, state: JobState) -> dict[str, Any]:
        return {
            "state": state.model_dump(mode="json"),
            "status": state.status,
            "updated_at": state.updated_at,
            "expire_at": state.updated_at + self._ttl,
        }


def _state_from(data: dict[str, Any] | None) -> JobState:
    return JobState.model_validate((data or {})["state"])
