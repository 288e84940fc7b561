"""The HTTP edge shared by the functions: parse untrusted requests, map errors to responses.

Nothing here knows about turns or facts; entry points hand ``guarded`` a function that does
the work, and every ``AppError`` becomes ``{"error": {"code", "message"}}``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import flask
from pydantic import BaseModel, ValidationError

from shared.errors import (
    AppError,
    BadRequest,
    InvalidJson,
    MethodNotAllowed,
    PayloadTooLarge,
)

log = logging.getLogger("web")
M = TypeVar("M", bound=BaseModel)


def read_body(request: flask.Request, max_bytes: int) -> bytes:
    declared = request.content_length
    if declared is not None and declared > max_bytes:
        raise PayloadTooLarge(f"body over {max_bytes} bytes")
    body = request.stream.read(max_bytes + 1)  # never buffers more than the cap
    if len(body) > max_bytes:
        raise PayloadTooLarge(f"body over {max_bytes} bytes")
    return body


def parse_json(body: bytes, model: type[M]) -> M:
    try:
        raw = json.loads(body, parse_float=_number)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidJson("body is not valid JSON") from exc
    if not isinstance(raw, dict):
        raise InvalidJson("body must be a JSON object")
    try:
        # Strict, as the OpenAPI types say: 0 is no boolean, "5" no number.
        return model.model_validate_json(json.dumps(raw), strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "body"
        raise BadRequest(f"{where}: {first['msg']}") from exc


def _number(text: str) -> float | int:
    """JSON Schema counts 5.0 as an integer; so does the strict validation that follows."""
    value = float(text)
    return int(value) if value.is_integer() and abs(value) < 2**63 else value


def error_response(error: AppError) -> flask.Response:
    response = flask.Response(
        json.dumps(error.to_body()), status=error.status, mimetype="application/json"
    )
    if isinstance(error, MethodNotAllowed):  # RFC 9110: a 405 names the methods allowed
        response.headers["Allow"] = str(error.details.get("allow", "POST"))
    if error.retry_after is not None:
        response.headers["Retry-After"] = str(error.retry_after)
    return response


def json_response(payload: dict[str, Any], status: int = 200) -> flask.Response:
    return flask.Response(json.dumps(payload), status=status, mimetype="application/json")


def calendar_response(request: flask.Request, body: bytes) -> flask.Response:
    """An iCalendar document (a feed that calendar apps poll): GET or HEAD only. Private:
    the URL is a secret, no shared cache may keep it."""
    if request.method not in ("GET", "HEAD"):
        raise MethodNotAllowed("use GET")
    response = flask.Response(body, status=200, mimetype="text/calendar")
    response.headers["Content-Type"] = "text/calendar; charset=utf-8"
    response.headers["Cache-Control"] = "private, max-age=300"
    response.headers["Content-Disposition"] = 'inline; filename="calendar.ics"'
    return response


def require_post(request: flask.Request) -> None:
    if request.method != "POST":
        raise MethodNotAllowed("use POST")


def guarded(work: Callable[[], flask.Response]) -> flask.Response:
    """Run ``work``; typed errors become their response, anything else a logged 500."""
    try:
        return work()
    except AppError as error:
        if error.status >= 500:
            log.warning("request failed", extra={"code": error.code, "error": error.message})
        return error_response(error)
    except Exception:  # the edge: log with context, never leak internals
        log.exception("unhandled error")
        return error_response(AppError("internal error"))


def sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


def sse_response(events: Iterator[str]) -> flask.Response:
    response = flask.Response(flask.stream_with_context(events), mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"
    return response


def wants_stream(request: flask.Request, stream_flag: bool) -> bool:
    return stream_flag or "text/event-stream" in (request.headers.get("Accept") or "")


__all__ = [
    "error_response",
    "guarded",
    "json_response",
    "parse_json",
    "read_body",
    "require_post",
    "sse",
    "sse_response",
    "trace_header",
    "wants_stream",
]


def trace_header(request: flask.Request) -> str | None:
    """The caller's trace: Google's ``X-Cloud-Trace-Context`` or W3C ``traceparent``."""
    return request.headers.get("X-Cloud-Trace-Context") or request.headers.get("traceparent")
