"""The per-user turn context cached in Redis: persona and the user's own profile facts.

Whatever changes either (a profile update, an extraction that wrote facts, an edit in the
memory settings) calls ``invalidate_context``: it moves the user's context version on and
drops the cached value. A turn reads the version before it loads from the stores and tags
what it caches with it, so a turn that loaded just before a change cannot put the old
context back: its tag is stale, and the next turn reloads. The cached value is encrypted
with the user's data key: Redis never holds the user's facts in clear.
"""

from __future__ import annotations

from shared.ports import Cache

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
    cache.hit(context_version_key(user_id), VERSION_TTL_SECONDS)  # the version first
    cache.delete(context_key(user_id))
