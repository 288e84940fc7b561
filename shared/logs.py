"""Structured logs in Cloud Logging's JSON format (one object per line on stdout)."""

from __future__ import annotations

import json
import logging
import sys
from contextvars import ContextVar
from typing import Any

_trace: ContextVar[str | None] = ContextVar("trace", default=None)
_RESERVED = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message"}


class CloudJsonFormatter(logging.Formatter):
    def __init__(self, project: str) -> None:
        super().__init__()
        self._project = project

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "severity": record.levelname,
            "message": record.getMessage(),
            "logger": record.name,
        }
        entry.update({k: v for k, v in record.__dict__.items() if k not in _RESERVED})
        trace = _trace.get()
        if trace:
            entry["logging.googleapis.com/trace"] = f"projects/{self._project}/traces/{trace}"
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure(project: str, level: str) -> None:
    root = logging.getLogger()
    if any(isinstance(h.formatter, CloudJsonFormatter) for h in root.handlers):
        return
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(CloudJsonFormatter(project))
    root.addHandler(handler)
    root.setLevel(level)


def set_trace(header: str | None) -> None:
    """Take the trace id from ``X-Cloud-Trace-Context: TRACE/SPAN;o=1`` or ``traceparent``."""
    if not header:
        _trace.set(None)
        return
    if header.count("-") == 3:  # W3C traceparent: version-trace-span-flags
        _trace.set(header.split("-")[1])
    else:
        _trace.set(header.split("/")[0] or None)
