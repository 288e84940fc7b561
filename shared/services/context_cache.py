"""The per-user turn context cached in Redis: persona and the user's own profile facts.

Whatever changes either (a profile update, an extraction that wrote facts, an edit in the
memory settings) calls ``invalidate_context``: it moves the user's context version on and
drops the cached value. A turn reads the version before it loads from the stores and tags
what it caches with it, so a turn that loaded just before a change cannot put the old
context back: its tag is stale, and the next turn reloads. The cached value is encrypted
with the user's data key: Redis never holds the user's facts in clear.

Redis down: turns load the context from the stores (the cache is bypassed), and an
invalidation is best effort (logged; the adapter deletes the value once Redis is back).
"""

from __future__ import annotations

import logging

from shared.errors import DependencyUnavailable
from shared.ports import Cache

log = logging.getLogger("context_cache")

CONTEXT_TTL_SECONDS = 3600
# Outlives every value cached under it; when it expires the version restarts at 0, and
# anything tagged before has expired already.
VERSION_TTL_SECONDS = 3 * CONTEXT_TTL_SECONDS


def context_key(user_id: str) -> str:
    # "<kind>:<uid>" so account deletion's keyspace sweep finds it.
    return f"ctx:{user_id}"


def context_version_key(user_id: str) -> str:
    return f"ctxv:{user_id}"


def context_version(cache: Cache, user_id: str) -> int:
    raw = cache.get(context_version_key(user_id))
    return int(raw) if raw else 0


def invalidate_context(cache: Cache, user_id: str) -> None:
    """Best effort while Redis is down: the change itself is stored, and the Redis adapter
    repeats a failed delete once Redis answers again."""
    try:
        cache.hit(context_version_key(user_id), VERSION_TTL_SECONDS)  # the version first
    except DependencyUnavailable:
        log.warning("context version not moved on: redis unavailable")
    try:
        cache.delete(context_key(user_id))
    except DependencyUnavailable:
        log.warning("cached context not dropped yet: redis unavailable")
