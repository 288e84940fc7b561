"""The per-user turn context cached in Redis: persona and the user's own profile facts.

Whatever changes either (a profile update, an extraction that wrote facts, an edit in the
memory settings) calls ``invalidate_context`` so the next turn reloads it. The cached value
is encrypted with the user's data key: Redis never holds the user's facts in clear.
"""

from __future__ import annotations

from shared.ports import Cache

CONTEXT_TTL_SECONDS = 3600


def context_key(user_id: str) -> str:
    # "<kind>:<uid>" so account deletion's keyspace sweep finds it.
    return f"ctx:{user_id}"


def invalidate_context(cache: Cache, user_id: str) -> None:
    cache.delete(context_key(user_id))
