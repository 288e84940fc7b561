"""The user's assistant profile (persona, tone, language, time zone, presentation rules,
currency).

``update`` merges the given fields into the stored profile (the defaults when none is
stored), stores the whole profile and drops the cached turn context, which holds the
persona. Repeating an update stores the same profile again, so a retry after a 503 (say
Redis was down after the write) is harmless and completes the invalidation.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from shared.errors import DataRejected
from shared.models.domain import AssistantProfile
from shared.models.memory_api import AssistantProfileResponse, UpdateAssistantRequest
from shared.services.context_cache import invalidate_context
from shared.services.memory.ports import MemoryPorts

NOT_ZONES = frozenset({"localtime"})  # the host's zone, a file on the time zone path


def is_time_zone(name: str) -> bool:
    """Whether ``name`` is a key of the IANA time zone database (``Europe/Zurich``)."""
    if name in NOT_ZONES:
        return False
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a directory ("Europe")
        return False
    return True


class ProfileAdmin:
    def __init__(self, deps: MemoryPorts) -> None:
        self._deps = deps

    def get(self, user_id: str) -> AssistantProfileResponse:
        return AssistantProfileResponse(profile=self._deps.profiles.get_profile(user_id))

    def update(self, user_id: str, request: UpdateAssistantRequest) -> AssistantProfileResponse:
        if request.timezone is not None and not is_time_zone(request.timezone):
            raise DataRejected(f"timezone: {request.timezone!r} is not an IANA time zone")
        changes = request.model_dump(include=request.model_fields_set)
        current = self._deps.profiles.get_profile(user_id)
        now = self._deps.clock.now()
        profile = AssistantProfile.model_validate(
            {**current.model_dump(), **changes, "updated_at": now}
        )
        self._deps.profiles.put_profile(user_id, profile, now)
        invalidate_context(self._deps.cache, user_id)
        return AssistantProfileResponse(profile=profile)
