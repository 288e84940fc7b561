"""The error tree. Every error the product raises on purpose derives from ``AppError``.

Each error carries the HTTP ``status`` it maps to and a stable machine-readable ``code``
that clients switch on; ``message`` is for humans and may change. ``retry_after`` (seconds)
becomes the response's ``Retry-After`` header.

The body follows Google's AIP-193 (the house style of Google APIs) with one deliberate
difference: ``code`` stays our string, since clients switch on it, and the HTTP status is the
response's. ``status`` is the canonical gRPC name of the HTTP status, and ``details`` holds one
``google.rpc.ErrorInfo`` whose ``reason`` is the code in upper case::

    {"error": {"code": "stale_etag", "message": "...", "status": "FAILED_PRECONDITION",
               "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                            "reason": "STALE_ETAG", "domain": "assistant.api",
                            "metadata": {}}]}}

AppError
├── BadRequest (400)              invalid_request
│   ├── InvalidJson               invalid_json
│   ├── InvalidPageToken          invalid_page_token (forged, foreign, expired, or for
│   │                                                another filter)
│   ├── MessageTooLong            message_too_long
│   ├── InvalidEvent              invalid_event     (a queue delivery that can never succeed)
│   ├── DueAtInPast               due_at_in_past    (a reminder must ring in the future)
│   ├── DueAtTooFar               due_at_too_far    (more than ten years ahead)
│   ├── UnknownTimeZone           unknown_time_zone (not an IANA zone name)
│   ├── InvalidRecurrence         invalid_recurrence (not an RFC 5545 RRULE we ring by)
│   └── InvalidDevice             invalid_device    (a push endpoint that is not https, an
│                                                    FCM token that is not one, or a forged one)
├── Unauthenticated (401)         unauthenticated
├── Forbidden (403)               forbidden
├── NotFound (404)                not_found         (also another user's chat: never reveal it)
├── MethodNotAllowed (405)        method_not_allowed
├── Conflict (409)                conflict
│   ├── InterruptNotPending       interrupt_not_pending
│   ├── TurnInProgress            turn_in_progress  (same client_message_id still running)
│   ├── AccountErased             account_erased    (the account is being erased, or the
│   │                                                work was queued before it was)
│   ├── ChatBusy                  chat_busy         (another turn of the chat runs: the
│   │                                                request said not to wait, or waited in
│   │                                                vain; answered with Retry-After)
│   ├── FactNotCurrent            fact_not_current  (only a current fact can be edited)
│   ├── PendingNotOpen            pending_not_open  (a pending item is answered once)
│   ├── JobInProgress             job_in_progress   (an agent job cannot go on now: another
│   │                                                run holds it, or it waits to ask; the
│   │                                                queue retries the delivery)
│   ├── JobNotActive              job_not_active    (the user's pause/resume/cancel does
│   │                                                not apply to the job's state)
│   └── ReminderNotOpen           reminder_not_open (a done or cancelled reminder is not
│                                                    snoozed or edited)
├── PreconditionFailed (412)      stale_etag        (If-Match or the etag field names a
│                                                    version that is no longer current)
├── DataRejected (422)            data_rejected     (a constraint refused a row or a value,
│                                                    e.g. an unknown time zone; no retry helps)
├── PayloadTooLarge (413)         payload_too_large
├── RateLimited (429)             rate_limited
├── DependencyUnavailable (503)   dependency_unavailable  (transient: a queue should retry)
│   ├── ModelThrottled            model_throttled   (Vertex 429 past the wait the call allows;
│   │                                                ``retry_after`` is Vertex's RetryInfo)
│   └── ModelNotFound             model_not_found   (Vertex 404: the configured model is
│                                                    retired or unknown; an operator error,
│                                                    logged as such; retried once it is fixed)
├── ModelOutputInvalid (502)      model_output_invalid    (the model broke its schema twice)
├── ModelRequestRefused (502)     model_request_refused   (Vertex 400: a request we built
│                                                    wrongly; no retry helps)
├── ModelDeclined (422)           model_declined    (the model would not answer: a blocked
│                                                    prompt or a SAFETY/RECITATION/... stop;
│                                                    a turn answers it with a clear reply)
├── BudgetExceeded (429)          turn_budget_exceeded    (the turn spent its token budget)
├── NodeFailed                    node_failed   (a graph node failed: the turn answers with a
│                                               fallback reply; ``cause`` is the typed error)
└── ConfigurationError            (raised at start-up; never reaches a client)
"""

from __future__ import annotations

from typing import Any, ClassVar

ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
ERROR_DOMAIN = "assistant.api"
# HTTP status -> the canonical gRPC code name (google.rpc.Code), as AIP-193 maps them.
STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "UNIMPLEMENTED",
    409: "ABORTED",
    412: "FAILED_PRECONDITION",
    413: "INVALID_ARGUMENT",
    422: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    502: "INTERNAL",
    503: "UNAVAILABLE",
}


class AppError(Exception):
    status: ClassVar[int] = 500
    code: ClassVar[str] = "internal"

    def __init__(self, message: str = "", retry_after: int | None = None, **details: Any) -> None:
        super().__init__(message or self.code)
        self.message = message or self.code
        self.retry_after = retry_after
        self.details = details

    def to_body(self) -> dict[str, Any]:
        info = {
            "@type": ERROR_INFO,
            "reason": self.code.upper(),
            "domain": ERROR_DOMAIN,
            "metadata": {key: str(value) for key, value in self.details.items()},
        }
        return {
            "error": {
                "code": self.code,
                "message": self.message,
                "status": STATUS_NAMES.get(self.status, "UNKNOWN"),
                "details": [info],
            }
        }


class BadRequest(AppError):
    status = 400
    code = "invalid_request"


class InvalidJson(BadRequest):
    code = "invalid_json"


class InvalidPageToken(BadRequest):
    code = "invalid_page_token"


class MessageTooLong(BadRequest):
    code = "message_too_long"


class InvalidEvent(BadRequest):
    code = "invalid_event"


class DueAtInPast(BadRequest):
    code = "due_at_in_past"


class DueAtTooFar(BadRequest):
    code = "due_at_too_far"


class UnknownTimeZone(BadRequest):
    code = "unknown_time_zone"


class InvalidRecurrence(BadRequest):
    code = "invalid_recurrence"


class InvalidDevice(BadRequest):
    code = "invalid_device"


class Unauthenticated(AppError):
    status = 401
    code = "unauthenticated"


class Forbidden(AppError):
    status = 403
    code = "forbidden"


class NotFound(AppError):
    status = 404
    code = "not_found"


class MethodNotAllowed(AppError):
    status = 405
    code = "method_not_allowed"


class Conflict(AppError):
    status = 409
    code = "conflict"


class InterruptNotPending(Conflict):
    code = "interrupt_not_pending"


class TurnInProgress(Conflict):
    code = "turn_in_progress"


class AccountErased(Conflict):
    code = "account_erased"


class ChatBusy(Conflict):
    code = "chat_busy"


class PreconditionFailed(AppError):
    """A conditional write named a version that is no longer current: nothing changed."""

    status = 412
    code = "stale_etag"


class DataRejected(AppError):
    status = 422
    code = "data_rejected"


class FactNotCurrent(Conflict):
    """Only the current version of a fact can be edited; history is read-only."""

    code = "fact_not_current"


class PendingNotOpen(Conflict):
    """The pending item was answered already (each is answered exactly once)."""

    code = "pending_not_open"


class JobInProgress(Conflict):
    code = "job_in_progress"


class JobNotActive(Conflict):
    code = "job_not_active"


class ReminderNotOpen(Conflict):
    code = "reminder_not_open"


class PayloadTooLarge(AppError):
    status = 413
    code = "payload_too_large"


class RateLimited(AppError):
    status = 429
    code = "rate_limited"


class DependencyUnavailable(AppError):
    status = 503
    code = "dependency_unavailable"


class ModelOutputInvalid(AppError):
    status = 502
    code = "model_output_invalid"


class ModelThrottled(DependencyUnavailable):
    code = "model_throttled"


class ModelNotFound(DependencyUnavailable):
    code = "model_not_found"


class ModelRequestRefused(AppError):
    status = 502
    code = "model_request_refused"


class ModelDeclined(AppError):
    """``reason``: Vertex's finish reason or prompt block reason (e.g. ``SAFETY``)."""

    status = 422
    code = "model_declined"

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message, reason=reason)
        self.reason = reason


class BudgetExceeded(AppError):
    status = 429
    code = "turn_budget_exceeded"


class NodeFailed(AppError):
    """A node of the turn graph failed; ``node`` names it, ``cause`` is the typed error."""

    code = "node_failed"

    def __init__(self, node: str, cause: AppError) -> None:
        super().__init__(f"{node}: {cause.code}: {cause.message}")
        self.node = node
        self.cause = cause


class ConfigurationError(AppError):
    code = "configuration_error"
