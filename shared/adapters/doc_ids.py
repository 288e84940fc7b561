"""Ids that become Firestore document path segments, checked the same in every store."""

from __future__ import annotations


def doc_id(value: str) -> str:
    """Refuse ids that would name another path (a ``/``) or that Firestore reserves."""
    if (
        not value
        or "/" in value
        or value in (".", "..")
        or (value.startswith("__") and value.endswith("__"))
        or len(value.encode()) > 1500
    ):
        raise ValueError(f"not a valid document id: {value!r}")
    return value
