"""The Firestore client, with every call bounded in time.

The generated defaults retry an unavailable Firestore for 60 s (writes) to 300 s (queries)
per call, so an outage held each request for minutes before anything could answer 503.
Here each call keeps the generated retry rules (which errors are retried; writes never retry
an error that may have applied) but gives up after ``deadline_seconds``; and the gRPC
channel tries to reconnect at least every second, so calls succeed again within about a
second once Firestore is back (gRPC's own backoff grows to two minutes).

Only the Firestore client's documented construction path is replaced: the transport class
it builds (``_firestore_api_helper``) and the channel options of both the emulator and the
production channel.
"""

from __future__ import annotations

from typing import Any

from google.api_core import exceptions as gexc
from google.api_core import gapic_v1
from google.api_core import retry as retries
from google.cloud import firestore
from google.cloud.firestore_v1.services.firestore import client as firestore_client
from google.cloud.firestore_v1.services.firestore.transports.grpc import FirestoreGrpcTransport

RECONNECT_OPTIONS = [
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 1000),
]
_UNLIMITED = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
_TRANSIENT = (gexc.DeadlineExceeded, gexc.InternalServerError, gexc.ServiceUnavailable)
_THROTTLED = (gexc.ResourceExhausted,)
# What the generated transport retries, per method (google/cloud/firestore_v1/services/
# firestore/transports/base.py): reads retry any transient error; writes only those that
# cannot have applied.
_RETRIED: dict[str, tuple[type[Exception], ...]] = {
    **dict.fromkeys(
        ("get_document", "list_documents", "list_collection_ids", "begin_transaction",
         "rollback", "delete_document"),
        _TRANSIENT + _THROTTLED,
    ),
    **dict.fromkeys(
        ("batch_get_documents", "run_query", "run_aggregation_query", "partition_query"),
        _TRANSIENT,
    ),
    **dict.fromkeys(
        ("commit", "update_document", "create_document"),
        (gexc.ServiceUnavailable, *_THROTTLED),
    ),
    "batch_write": (gexc.Aborted, gexc.ServiceUnavailable, *_THROTTLED),
}  # fmt: skip


def bounded_client(project: str, deadline_seconds: float) -> firestore.Client:
    return _BoundedClient(project=project, deadline_seconds=deadline_seconds)


class _BoundedClient(firestore.Client):
    def __init__(self, project: str, deadline_seconds: float) -> None:
        super().__init__(project=project)
        self._deadline_seconds = deadline_seconds

    @property
    def _firestore_api(self) -> Any:
        transport = _bounded_transport(self._deadline_seconds)
        return self._firestore_api_helper(
            transport, firestore_client.FirestoreClient, firestore_client
        )

    def _emulator_channel(self, transport: Any) -> Any:
        """As the library makes it (an insecure channel, the emulator's owner token, no
        message size limit), with the reconnect options."""
        import grpc

        options = [("Authorization", "Bearer owner"), *_UNLIMITED, *RECONNECT_OPTIONS]
        return grpc.insecure_channel(self._emulator_host, options=options)


def _bounded_transport(deadline: float) -> type[FirestoreGrpcTransport]:
    class BoundedTransport(FirestoreGrpcTransport):
        @classmethod
        def create_channel(cls, *args: Any, **kwargs: Any) -> Any:
            kwargs["options"] = [*kwargs.get("options", ()), *RECONNECT_OPTIONS]
            return super().create_channel(*args, **kwargs)

        def _prep_wrapped_messages(self, client_info: Any) -> None:
            super()._prep_wrapped_messages(client_info)  # type: ignore[no-untyped-call]
            for name, retried in _RETRIED.items():
                method = getattr(self, name)
                self._wrapped_methods[method] = gapic_v1.method.wrap_method(  # type: ignore[no-untyped-call]
                    method,
                    default_retry=retries.Retry(
                        initial=0.1,
                        maximum=1.0,
                        multiplier=1.3,
                        predicate=retries.if_exception_type(*retried),
                        deadline=deadline,
                    ),
                    default_timeout=deadline,
                    client_info=client_info,
                )

    return BoundedTransport
