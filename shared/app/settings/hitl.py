"""The user's human-in-the-loop settings: their trust level, and a mode they may pin.

``get`` shows the level, the effective mode (the pinned one, else the level's), the task
counters and what the next level needs; ``update`` pins a mode or unpins it (null) and
changes nothing else: the counters are the product's record, never the user's to write.
Pinning is a transaction on the record, so it cannot undo an outcome counted meanwhile; a
repeated update stores the same mode again.
"""

from __future__ import annotations

from datetime import datetime

from shared.models.trust import HitlSettingsResponse, HitlView, TrustRecord, UpdateHitlRequest
from shared.services.hitl_trust import MODE_OF_LEVEL, effective_mode, next_level, success_rate
from shared.services.memory.ports import MemoryPorts


class HitlAdmin:
    def __init__(self, deps: MemoryPorts) -> None:
        self._deps = deps

    def get(self, user_id: str) -> HitlSettingsResponse:
        record = self._deps.trust.get(user_id)
        return HitlSettingsResponse(hitl=view(record, self._deps.clock.now()))

    def update(self, user_id: str, request: UpdateHitlRequest) -> HitlSettingsResponse:
        now = self._deps.clock.now()
        record = self._deps.trust.put_settings(user_id, request.pinned_mode, now)
        return HitlSettingsResponse(hitl=view(record, now))


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
