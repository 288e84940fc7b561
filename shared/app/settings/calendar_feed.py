"""The user's calendar feed: ``/v1/calendarFeed`` turns it on (``:enable``), issues a new
URL (``:rotate``) or off (``DELETE``); the URL itself, ``/v1/calendarFeeds/{token}/
calendar.ics``, is read by calendar apps without any other credential.

Enabling twice returns the one URL (a double click issues one). A rotated or revoked URL,
another user's token and a token nobody was given all answer the same 404 ``not_found``:
a token is either the caller's key to their own feed or nothing.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Protocol

from shared.config import Settings
from shared.errors import NotFound
from shared.models.agent_data import MAX_PAGE
from shared.models.calendar_feed import (
    FEED_PATH,
    TOKEN_PATTERN,
    CalendarFeedView,
    FeedGrant,
    token_digest,
)
from shared.ports import AgentDataStore, CalendarFeedStore, Clock, ProfileStore, ReminderStore
from shared.services.calendar_feed import feed_bytes

FEEDS_PREFIX = "/v1/calendarFeeds/"
PAST = timedelta(days=366)  # how far back the feed reaches (a recurring event's first date)
AHEAD = timedelta(days=5 * 366)


class CalendarFeedPorts(Protocol):
    @property
    def settings(self) -> Settings:
        """``public_api_origin``: the feed URLs are made on it."""
        ...

    @property
    def clock(self) -> Clock: ...
    @property
    def profiles(self) -> ProfileStore: ...
    @property
    def agent_data(self) -> AgentDataStore: ...
    @property
    def calendar_feeds(self) -> CalendarFeedStore: ...
    @property
    def reminders(self) -> ReminderStore: ...


def feed_token(path: str) -> str | None:
    """The token of a path under the feeds' URLs ("" for a malformed one, which no feed
    has: 404 like any other miss, never a request for a user's API); None: not a feed."""
    if not path.startswith(FEEDS_PREFIX):
        return None
    token, _, rest = path.removeprefix(FEEDS_PREFIX).partition("/")
    return token if rest == "calendar.ics" else ""


class CalendarFeedAdmin:
    def __init__(self, deps: CalendarFeedPorts) -> None:
        self._deps = deps

    def _view(self, grant: FeedGrant | None) -> CalendarFeedView:
        if grant is None:
            return CalendarFeedView(enabled=False)
        origin = self._deps.settings.public_api_origin.rstrip("/")
        url = origin + FEED_PATH.format(token=grant.token)
        return CalendarFeedView(enabled=True, url=url, created_at=grant.created_at)

    def get(self, user_id: str) -> CalendarFeedView:
        return self._view(self._deps.calendar_feeds.get_feed(user_id))

    def enable(self, user_id: str) -> CalendarFeedView:
        grant = FeedGrant.issue(self._deps.clock.now())
        return self._view(self._deps.calendar_feeds.put_feed(user_id, grant))

    def rotate(self, user_id: str) -> CalendarFeedView:
        grant = FeedGrant.issue(self._deps.clock.now())
        return self._view(self._deps.calendar_feeds.replace_feed(user_id, grant))

    def disable(self, user_id: str) -> CalendarFeedView:
        self._deps.calendar_feeds.delete_feed(user_id)
        return self._view(None)


def read_feed(deps: CalendarFeedPorts, token: str) -> bytes:
    """The feed of the token's owner, or ``NotFound`` (the same for every kind of miss)."""
    if not re.match(TOKEN_PATTERN, token):
        raise NotFound("no such calendar feed")
    owner = deps.calendar_feeds.feed_owner(token_digest(token))
    if owner is None:
        raise NotFound("no such calendar feed")
    now = deps.clock.now()
    events = deps.agent_data.list_events(owner, now - PAST, now + AHEAD, MAX_PAGE)
    reminders = deps.reminders.list_open(owner, MAX_PAGE)
    zone = deps.profiles.get_profile(owner).timezone
    return feed_bytes(events, reminders, zone, now)
