"""The user's human-in-the-loop settings as the singleton ``/v1/settings/hitl``: their
trust level, and a mode they may pin.

``get`` shows the level, the effective mode (the pinned one, else the level's), the task
counters and what the next level needs; a PATCH pins a mode or unpins it (null) and
changes nothing else: the counters are the product's record, never the user's to write,
so the etag is of the pinned mode only. Pinning is a transaction on the record, so it
cannot undo an outcome counted meanwhile; a repeated update stores the same mode again.
The etag is checked against the record read just before that transaction (a window of
one request: the other write would be a pin of the same user's other device).
"""

from __future__ import annotations

from datetime import datetime

from shared.app.settings.queries import masked
from shared.models.memory_v1 import HitlPatch, HitlSettings
from shared.models.trust import HitlView, TrustRecord
from shared.rest import etags
from shared.services.hitl_trust import MODE_OF_LEVEL, effective_mode, next_level, success_rate
from shared.services.memory.needs import MemoryPorts

EDITABLE = frozenset({"pinned_mode"})


class HitlAdmin:
    def __init__(self, deps: MemoryPorts) -> None:
        self._deps = deps

    def get(self, user_id: str) -> HitlSettings:
        record = self._deps.trust.get(user_id)
        return HitlSettings.of(view(record, self._deps.clock.now()))

    def patch(
        self, user_id: str, body: HitlPatch, mask: str | None, if_match: str | None
    ) -> HitlSettings:
        changes = masked(body, mask, EDITABLE)
        current = self.get(user_id)
        etags.check(etags.wanted(if_match, body.etag), current.etag)
        now = self._deps.clock.now()
        record = self._deps.trust.put_settings(user_id, changes["pinned_mode"], now)
        return HitlSettings.of(view(record, now))


def view(record: TrustRecord, now: datetime) -> HitlView:
    return HitlView.model_validate(
        {
            **record.model_dump(),
            "mode": effective_mode(record),
            "level_mode": MODE_OF_LEVEL[record.level],
            "success_rate": success_rate(record),
            "next_level": next_level(record, now),
        }
    )
