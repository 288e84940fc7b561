"""Etags of mutable resources (AIP-154, RFC 9110 8.8.3).

An etag is a digest of what a user may change in the resource, so a change made by anyone
else (another device, a merge) changes it, and a background touch that the user cannot edit
(a fact seen again) does not. The JSON field carries the bare value; the ``ETag`` header
carries it quoted. A write names the version it read in ``If-Match`` (or the body's
``etag``); a stale one is refused with 412 ``stale_etag`` and nothing changes.
"""

from __future__ import annotations

from typing import Any

from shared.errors import BadRequest, PreconditionFailed
from shared.models.base import digest_of

ANY = "*"


def etag_of(*parts: Any) -> str:
    return digest_of(*parts)  # the models' views compute theirs with it too


def wanted(if_match: str | None, body_etag: str | None = None) -> str | None:
    """The etag a conditional write names: the ``If-Match`` header (one entity tag, quoted
    or not, weak or strong: we compare values) or else the body's field; None: no condition."""
    if if_match is not None:
        tag = if_match.strip()
        if "," in tag:
            raise BadRequest("If-Match: give one entity tag")
        tag = tag.removeprefix("W/").strip('"')
        if not tag:
            raise BadRequest("If-Match: empty")
        return tag
    return body_etag or None


def check(expected: str | None, current: str) -> None:
    if expected is not None and expected not in (ANY, current):
        raise PreconditionFailed("the resource changed since it was read; read it again")


def header(etag: str) -> str:
    return f'"{etag}"'
