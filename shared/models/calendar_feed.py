"""The user's calendar feed: a secret iCalendar URL any calendar app can subscribe to.

The grant holds the URL's token (so the user can see the URL again) and its digest, by
which the anonymous feed request finds its owner. Turning the feed off deletes the grant:
the URL answers 404 from then on, like any unknown token.
"""

from __future__ import annotations

import hashlib
import secrets

from pydantic import AwareDatetime, Field

from shared.models.base import Strict

TOKEN_BYTES = 32  # 256 bits: the URL is the only credential a subscriber has
TOKEN_PATTERN = r"^[A-Za-z0-9_-]{43}$"  # TOKEN_BYTES in unpadded base64url
FEED_PATH = "/v1/calendarFeeds/{token}/calendar.ics"


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_digest(token: str) -> str:
    """Stored instead of the token where the feed request looks it up."""
    return hashlib.sha256(token.encode()).hexdigest()


class FeedGrant(Strict):
    token: str = Field(pattern=TOKEN_PATTERN)
    digest: str = Field(pattern=r"^[0-9a-f]{64}$")
    created_at: AwareDatetime

    @classmethod
    def issue(cls, now: AwareDatetime) -> FeedGrant:
        token = new_token()
        return cls(token=token, digest=token_digest(token), created_at=now)


class CalendarFeedView(Strict):
    """``/v1/calendarFeed``: whether the feed is on, and its URL when it is."""

    enabled: bool
    url: str | None = None
    created_at: AwareDatetime | None = None
