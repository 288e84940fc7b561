"""The expiry job: facts whose durability ran out leave memory for good, as history.

Retrieval already leaves a fact out from its ``expires_at`` on; this job then closes it
(``valid_to = expires_at``, ``ended_by = "expired"``), in batches, for every user, and drops
the cached turn context of the users it touched. Run by Cloud Scheduler (an OIDC-signed POST
to the extraction function's ``/expire``) and locally by ``scripts/expire_facts.py``.
Idempotent: a second run, or two at once (rows one run holds are skipped by the other),
closes nothing twice; closing never deletes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from shared.ports import Cache, FactExpiry
from shared.services.context_cache import invalidate_context

log = logging.getLogger("expiry")

BATCH = 500
MAX_BATCHES = 200  # one run closes at most 100,000; the next run takes the rest


class ExpiryPorts(Protocol):
    @property
    def fact_expiry(self) -> FactExpiry: ...

    @property
    def cache(self) -> Cache: ...


@dataclass(frozen=True)
class ExpiryOutcome:
    closed: int
    users: int
    batches: int

    def as_body(self) -> dict[str, object]:
        return {"status": "expired", "closed": self.closed, "users": self.users}


def expire_facts(
    ports: ExpiryPorts, now: datetime, batch: int = BATCH, max_batches: int = MAX_BATCHES
) -> ExpiryOutcome:
    closed, users, batches = 0, set[str](), 0
    while batches < max_batches:
        result = ports.fact_expiry.expire_due(now, batch)
        batches += 1
        closed += result.closed
        for user_id in set(result.user_ids) - users:
            invalidate_context(ports.cache, user_id)
        users |= set(result.user_ids)
        if result.closed < batch:
            break
    outcome = ExpiryOutcome(closed=closed, users=len(users), batches=batches)
    log.info("expiry done", extra=outcome.as_body())
    return outcome
