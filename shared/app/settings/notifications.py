"""The user's notification preferences as the singleton ``/v1/settings/notifications``:
which kinds are pushed, the quiet hours and the zone they are read in. The etag is of all
three; it is checked against the settings read just before the write (as the other
singletons: a window of one request)."""

from __future__ import annotations

from shared.app.settings.queries import masked
from shared.errors import BadRequest
from shared.models.notifications import SETTING_KINDS, NotificationSettings
from shared.models.notify_api import NotificationSettingsPatch, NotificationSettingsResource
from shared.ports import Clock, NotificationStore
from shared.rest import etags
from shared.services.reminders.timing import zone

EDITABLE = frozenset({"kinds", "quiet_hours", "time_zone"})


def resource(settings: NotificationSettings) -> NotificationSettingsResource:
    kinds = {kind: settings.kinds.get(kind, True) for kind in SETTING_KINDS}
    tag = etags.etag_of(kinds, settings.quiet_hours, settings.time_zone)
    return NotificationSettingsResource(
        kinds=kinds, quiet_hours=settings.quiet_hours, time_zone=settings.time_zone, etag=tag
    )


class NotificationSettingsAdmin:
    def __init__(self, store: NotificationStore, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    def get(self, user_id: str) -> NotificationSettingsResource:
        return resource(self._store.get_settings(user_id))

    def patch(
        self,
        user_id: str,
        body: NotificationSettingsPatch,
        mask: str | None,
        if_match: str | None,
    ) -> NotificationSettingsResource:
        changes = masked(body, mask, EDITABLE)
        current = self._store.get_settings(user_id)
        etags.check(etags.wanted(if_match, body.etag), resource(current).etag)
        if "kinds" in changes:
            kinds = changes["kinds"] or {}
            if unknown := set(kinds) - set(SETTING_KINDS):
                raise BadRequest(f"kinds: {sorted(unknown)} not among {list(SETTING_KINDS)}")
            changes["kinds"] = {**current.kinds, **kinds}
        if changes.get("time_zone") is not None:
            zone(changes["time_zone"])
        elif "time_zone" in changes:
            raise BadRequest("time_zone: cannot be null")
        updated = current.model_copy(update={**changes, "updated_at": self._clock.now()})
        self._store.put_settings(user_id, updated)
        return resource(updated)
