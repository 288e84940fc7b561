"""The user's assistant profile (persona, tone, language, time zone, presentation rules,
currency) as the singleton ``/v1/settings/assistant``.

A PATCH merges the masked fields into the stored profile (the defaults when none is
stored), stores the whole profile and drops the cached turn context, which holds the
persona. Its etag is checked against the profile read just before the write; a write of
another device landing between the two is not detected (a window of one request, while
the etag closes the window of minutes between a page's load and its save). Repeating an
update stores the same profile again, so a retry after a 503 is harmless.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from shared.app.settings.needs import SettingsPorts
from shared.app.settings.queries import masked
from shared.errors import DataRejected
from shared.models.domain import AssistantProfile
from shared.models.memory_api import UpdateAssistantRequest
from shared.models.memory_v1 import AssistantPatch, AssistantSettings
from shared.rest import etags
from shared.rest.routes import validated
from shared.services.context_cache import invalidate_context

NOT_ZONES = frozenset({"localtime"})  # the host's zone, a file on the time zone path
EDITABLE = frozenset(set(UpdateAssistantRequest.model_fields))


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
    def __init__(self, deps: SettingsPorts) -> None:
        self._deps = deps

    def get(self, user_id: str) -> AssistantSettings:
        return AssistantSettings.of(self._deps.profiles.get_profile(user_id))

    def patch(
        self, user_id: str, body: AssistantPatch, mask: str | None, if_match: str | None
    ) -> AssistantSettings:
        changes = masked(body, mask, EDITABLE)
        request = validated(UpdateAssistantRequest, changes, "body")  # nulls, bounds
        if request.timezone is not None and not is_time_zone(request.timezone):
            raise DataRejected(f"timezone: {request.timezone!r} is not an IANA time zone")
        current = self._deps.profiles.get_profile(user_id)
        etags.check(etags.wanted(if_match, body.etag), AssistantSettings.of(current).etag)
        now = self._deps.clock.now()
        profile = AssistantProfile.model_validate(
            {**current.model_dump(), **changes, "updated_at": now}
        )
        self._deps.profiles.put_profile(user_id, profile, now)
        invalidate_context(self._deps.cache, user_id)
        return AssistantSettings.of(profile)
