"""Opaque page tokens (AIP-158).

A token carries the position after the last item of a page (a keyset position such as
``(created_at, id)``, never an offset), its expiry, and a MAC over that and over what it is
bound to: the user and the list's scope (the collection, its filter and its order). So a
token cannot be forged, moved to another user, reused with another filter, or kept past its
expiry: each answers 400 ``invalid_page_token``. Keyset positions also keep paging exact
while items are added: nothing is skipped or returned twice.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shared.errors import InvalidPageToken

TOKEN_TTL = timedelta(hours=24)
MAC_BYTES = 16
Position = list[Any]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class PageTokens:
    def __init__(self, key: bytes, ttl: timedelta = TOKEN_TTL) -> None:
        self._key = key
        self._ttl = ttl

    def issue(self, user_id: str, scope: str, position: Sequence[Any], now: datetime) -> str:
        payload = json.dumps(
            {"p": list(position), "e": int((now + self._ttl).timestamp())},
            separators=(",", ":"),
            default=str,
        ).encode()
        return f"{_b64(payload)}.{_b64(self._mac(user_id, scope, payload))}"

    def read(self, token: str, user_id: str, scope: str, now: datetime) -> Position:
        try:
            payload_text, mac_text = token.split(".")
            payload, mac = _unb64(payload_text), _unb64(mac_text)
        except (ValueError, binascii.Error) as exc:
            raise InvalidPageToken("page_token is not one this API issued") from exc
        if not hmac.compare_digest(mac, self._mac(user_id, scope, payload)):
            raise InvalidPageToken("page_token was not issued for this user and list")
        decoded = json.loads(payload)
        if decoded["e"] < now.timestamp():
            raise InvalidPageToken("page_token expired; list again from the first page")
        position: Position = decoded["p"]
        return position

    def _mac(self, user_id: str, scope: str, payload: bytes) -> bytes:
        bound = b"\x00".join([user_id.encode(), scope.encode(), payload])
        return hmac.new(self._key, bound, hashlib.sha256).digest()[:MAC_BYTES]


def scope_of(collection: str, **filters: Any) -> str:
    """A list's scope: the collection and every parameter that shapes its order or content."""
    text = json.dumps([collection, filters], default=str, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class PageQuery(BaseModel):
    """``page_size`` and ``page_token`` of a list request; lists add their own filters."""

    model_config = ConfigDict(extra="forbid")
    page_size: int = Field(default=0, ge=0)
    page_token: str = Field(default="", max_length=2048)

    def size(self, default: int, maximum: int) -> int:
        """0 means the list's default; more than its maximum is served as the maximum."""
        return min(self.page_size or default, maximum)
